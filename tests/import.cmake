# Tests of `llmstep hw import`: benchmark-output readers, fits and the profile round trip.
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_unit_test(test_import LIBS simio simcore)
# `llmstep import-bench`: benchmark result files as measurement rows.
sim_script_test(import_bench import_bench.sh ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})
