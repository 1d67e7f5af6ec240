/*
 * status.h - status codes shared by every module.
 *
 * One X-macro generates the enum and the message table (the libuv UV_ERRNO_MAP
 * pattern), so a new code cannot be added without its message. Loaders also fill
 * a caller-provided struct sim_err with a one-line human message in the form
 * "<file>:<line>:<col>: <json.path>: <problem> (expected <constraint>, got <value>)".
 */
#ifndef SIM_STATUS_H
#define SIM_STATUS_H

#define SIM_STATUS_MAP(XX)                                                                         \
    XX(OK, "ok")                                                                                   \
    XX(EINVAL, "invalid argument")                                                                 \
    XX(EPARSE, "parse error")                                                                      \
    XX(ERANGE, "value out of range")                                                               \
    XX(EIO, "input/output error")                                                                  \
    XX(ENOMEM, "out of memory")                                                                    \
    XX(EFIT, "fit failed")

typedef enum sim_status {
#define XX(name, msg) SIM_##name,
    SIM_STATUS_MAP(XX)
#undef XX
        SIM_STATUS_COUNT
} sim_status;

/* Returns a static string describing status; never NULL. */
const char *sim_strerror(sim_status status);

/* A caller-owned error message buffer, filled by functions that can fail on user input. */
struct sim_err {
    char msg[512];
};

#endif
