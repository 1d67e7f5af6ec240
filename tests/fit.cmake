# Tests of the metrics (simcore) and of the calibration fit (simcalib).
# Included from tests/CMakeLists.txt; needs add_subdirectory(calibrate) at the top level.
add_executable(test_metrics ${CMAKE_CURRENT_LIST_DIR}/test_metrics.c)
target_link_libraries(test_metrics PRIVATE simcore)
add_test(NAME test_metrics COMMAND test_metrics)

add_executable(test_calib_fit ${CMAKE_CURRENT_LIST_DIR}/test_calib_fit.c)
target_link_libraries(test_calib_fit PRIVATE simcalib simcore)
add_test(NAME test_calib_fit COMMAND test_calib_fit)
