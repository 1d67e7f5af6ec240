# Tests of online serving on the V1 engine (issue 8).
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_script_test(serve_cli serve_cli.sh ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})

# Serving accuracy on the shared aiconfigurator rows; skipped (exit 77) without ../shared/data.
sim_script_test(accuracy_serving accuracy_serving.sh SKIPPABLE
  ARGS $<TARGET_FILE:llmstep> ${SIM_SHARED_DATA})

# Each shipped calibration is regenerated from its recorded command and compared.
sim_script_test(calibrations_reproducible calibrations.sh SKIPPABLE
  ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})

# One deployment, one answer: the issue's examples, each answered alike by every command.
sim_script_test(one_answer one_answer.sh ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})
