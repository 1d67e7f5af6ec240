# Tests of online serving on the V1 engine (issue 8).
# Included from tests/CMakeLists.txt, which sets SIM_TEST_DATA and SIM_SHARED_DATA.
include(${CMAKE_CURRENT_LIST_DIR}/helpers.cmake)
sim_script_test(serve_cli serve_cli.sh ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})

# Serving accuracy on the shared aiconfigurator rows; skipped (exit 77) without ../shared/data.
sim_script_test(accuracy_serving accuracy_serving.sh SKIPPABLE
  ARGS $<TARGET_FILE:llmstep> ${SIM_SHARED_DATA})

# Each shipped calibration is regenerated from its recorded command and compared. A check of
# the shipped data, not of memory safety: not under the sanitizers, where the serving fits of
# the InferenceX rows take minutes (the same code runs there under fit_cli and
# accuracy_serving).
if(NOT SIM_SANITIZE)
  sim_script_test(calibrations_reproducible calibrations.sh SKIPPABLE
    ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})
  # The work limit is reached after seconds of simulation, several times longer under the
  # sanitizers (the same code path runs there in every serving test).
  sim_script_test(work_limit work_limit.sh ARGS $<TARGET_FILE:llmstep>)
endif()

# One deployment, one answer: the issue's examples, each answered alike by every command.
sim_script_test(one_answer one_answer.sh ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})
sim_script_test(decode_kernel decode_kernel.sh ARGS $<TARGET_FILE:llmstep>)

# KV-cache capacity against the sizes vLLM logged at start-up, each with its source
# (tests/kv_logs.txt; docs/engine.md, "Checked against vLLM's logs").
sim_script_test(kv_logs kv_logs.sh ARGS $<TARGET_FILE:llmstep> ${CMAKE_SOURCE_DIR})
