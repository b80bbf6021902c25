/* barrier.h (emulator shim). A barrier_t is an immutable descriptor; the waiting state lives in
 * the shim, per DPU. The emulator supports barriers of all NR_TASKLETS tasklets (the counter
 * given to BARRIER_INIT is checked against the launch's tasklet count at the first wait). */
#ifndef PIMHE_EMU_BARRIER_H
#define PIMHE_EMU_BARRIER_H

#include <stdint.h>

#include "defs.h"

typedef struct {
    const char *counter; /* the BARRIER_INIT counter expression, as text */
} barrier_t;

#define BARRIER_INIT(_name, _counter) barrier_t _name = {#_counter}

void barrier_wait(barrier_t *barrier);

#endif /* PIMHE_EMU_BARRIER_H */
