/*
 * model_json.h - loads a HuggingFace config.json into a sim_model.
 *
 * The file's keys are HF's own (num_hidden_layers, num_key_value_heads, ...),
 * so real configs drop in unchanged. Keys llmstep does not use but HF configs
 * carry are accepted; a key within edit distance 2 of a used key is taken for a
 * misspelling and rejected ("did you mean"). Supported model_type values are the
 * rows of the architecture-traits table (sim/core/arch.h), whose layouts and
 * defaults say which keys are read. The mapping of each key is in docs/model.md,
 * "Model configs".
 */
#ifndef SIM_MODEL_JSON_H
#define SIM_MODEL_JSON_H

#include "model.h"
#include "status.h"

/*
 * Loads and validates the config at path; id is stored in m->id. On failure
 * returns non-OK with a one-line "file:line:col: key: problem" message in err.
 */
sim_status sim_model_load(const char *path, const char *id, sim_model *m /* OUT */,
                          struct sim_err *err /* OUT */);

#endif
