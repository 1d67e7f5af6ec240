# Tests of the measurement-file loader and the row selection (simio).
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_unit_test(test_meas LIBS simlib simcalib simio simcore)
