# Hostile input (issue 10): generated files that must fail fast, within time and memory.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_script_test(hostile_cli hostile_cli.sh ARGS $<TARGET_FILE:llmstep>)
