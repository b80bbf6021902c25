/* perfcounter.h (emulator shim). The emulator has no clock: the counter returns the calling
 * tasklet's charged instructions (cost.h) since its last reset, whatever is configured. Cycles
 * come from the timing model, not from here. */
#ifndef PIMHE_EMU_PERFCOUNTER_H
#define PIMHE_EMU_PERFCOUNTER_H

#include <stdbool.h>
#include <stdint.h>

#include "defs.h"

typedef uint64_t perfcounter_t;

typedef enum {
    COUNT_SAME = 0,
    COUNT_CYCLES = 1,
    COUNT_INSTRUCTIONS = 2,
    COUNT_NOTHING = 3,
} perfcounter_config_t;

perfcounter_t perfcounter_config(perfcounter_config_t config, bool reset_value);
perfcounter_t perfcounter_get(void);

#endif /* PIMHE_EMU_PERFCOUNTER_H */
