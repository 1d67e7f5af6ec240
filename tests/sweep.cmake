# Tests of capacity planning, sweeps and plots (issue 5).
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
add_executable(test_capacity ${CMAKE_CURRENT_LIST_DIR}/test_capacity.c)
target_link_libraries(test_capacity PRIVATE simio simcore)
target_compile_definitions(test_capacity PRIVATE SIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_test(NAME test_capacity COMMAND test_capacity)

# The CLI's number formatter is tested with the core, against snprintf.
add_executable(test_sweep ${CMAKE_CURRENT_LIST_DIR}/test_sweep.c ${CMAKE_SOURCE_DIR}/sim/cli/fastfmt.c)
target_include_directories(test_sweep PRIVATE ${CMAKE_SOURCE_DIR}/sim/cli)
target_link_libraries(test_sweep PRIVATE simio simcore)
target_compile_definitions(test_sweep PRIVATE SIM_SOURCE_DIR="${CMAKE_SOURCE_DIR}")
add_test(NAME test_sweep COMMAND test_sweep)

# Checks that a file is a well-formed PNG (signature, IHDR) or SVG (root element).
add_executable(check_image ${CMAKE_CURRENT_LIST_DIR}/check_image.c)

# Sweep row counts, order, marking, --best and --pareto against brute force, capacity JSON,
# and every plot command writing a valid SVG and PNG.
add_test(NAME sweep_cli
  COMMAND ${CMAKE_CURRENT_LIST_DIR}/sweep_cli.sh $<TARGET_FILE:llmstep> $<TARGET_FILE:check_image>
          ${CMAKE_SOURCE_DIR})
