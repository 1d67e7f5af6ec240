# Tests of capacity planning, sweeps and plots (issue 5).
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_unit_test(test_capacity LIBS simlib simcalib simio simcore)

# The CLI's number formatter is tested with the core, against snprintf.
sim_unit_test(test_sweep LIBS simio simcore SOURCES ${CMAKE_SOURCE_DIR}/sim/cli/fastfmt.c
  INCLUDES ${CMAKE_SOURCE_DIR}/sim/cli)

# Checks that a file is a well-formed PNG (signature, IHDR) or SVG (root element).
add_executable(check_image ${CMAKE_CURRENT_LIST_DIR}/check_image.c)

# Sweep row counts, order, marking, --best and --pareto against brute force, capacity JSON,
# and every plot command writing a valid SVG and PNG.
sim_script_test(sweep_cli sweep_cli.sh
  ARGS $<TARGET_FILE:llmstep> $<TARGET_FILE:check_image> ${CMAKE_SOURCE_DIR})
