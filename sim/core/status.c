/* status.c - messages for the SIM_STATUS_MAP codes. */
#include "status.h"

const char *sim_strerror(sim_status status)
{
    switch (status) {
#define XX(name, msg)                                                                              \
    case SIM_##name:                                                                               \
        return msg;
        SIM_STATUS_MAP(XX)
#undef XX
    case SIM_STATUS_COUNT:
        break;
    }
    return "unknown status";
}
