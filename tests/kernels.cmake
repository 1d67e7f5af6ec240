# Kernel-table reader tests (simio csv.c, kernel_tables.c) and validate-kernels on the
# shared tables. Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_unit_test(test_csv LIBS simio simcore)

# Skips (exit 77) with "SKIP ... (../shared/data absent)" when the shared folder is absent.
sim_script_test(validate_kernels_shared kernels_shared.sh SKIPPABLE
  ARGS $<TARGET_FILE:llmstep> ${SIM_SHARED_DATA})

# GPU speed-up check (issue 9): decode-step time ratios H200/H100 and B200/H100 from the
# measured tables against the step model's, within 10%. Skips like validate_kernels_shared.
sim_script_test(speedup_shared speedup_shared.sh SKIPPABLE
  ARGS $<TARGET_FILE:llmstep> ${SIM_SHARED_DATA})

# The validate-kernels module (sim/lib/kernels_validate.c) on the small tree tests/data/kernels.
sim_unit_test(test_kernels_validate LIBS simlib simcalib simio simcore)
