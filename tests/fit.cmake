# Tests of the metrics (simcore) and of the calibration fit (simcalib).
# Included from tests/CMakeLists.txt; needs add_subdirectory(calibrate) at the top level.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_unit_test(test_metrics LIBS simcore)
sim_unit_test(test_calib_fit LIBS simcalib simcore)
sim_unit_test(test_fit_figs LIBS simlib simcalib simio simcore)
sim_script_test(fit_cli fit_cli.sh SKIPPABLE ARGS $<TARGET_FILE:llmstep> ${SIM_SHARED_DATA})
# calibrate --fit on serving rows recovers a figure planted in a profile (no shared data).
sim_script_test(fit_serving fit_serving.sh ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})
# The band calibrate records, validate --interval and the drift alarm (check).
sim_script_test(check_cli check_cli.sh SKIPPABLE ARGS $<TARGET_FILE:llmstep> ${SIM_SHARED_DATA})
# The band every prediction reports with --interval (predict, latency, serve).
sim_script_test(band_cli band_cli.sh ARGS $<TARGET_FILE:llmstep>)
# The band's coverage on rows no fit and no band saw (validate --holdout --interval; issue 28).
sim_script_test(band_coverage band_coverage.sh SKIPPABLE
  ARGS $<TARGET_FILE:llmstep> ${SIM_SHARED_DATA})
# Disaggregated serving against a case worked by hand (issue 29; docs/serving.md).
sim_script_test(disagg_cli disagg_cli.sh ARGS $<TARGET_FILE:llmstep>)
