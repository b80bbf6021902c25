/*
 * tasklets.h (emulator only): runs one DPU's tasklets as coroutines on the calling host thread.
 *
 * A DPU's tasklets only ever wait for each other at barriers (pimhe's kernels keep no other
 * shared state: every tasklet's work is fixed by its id), so running them one after another,
 * each until its next barrier or its end, computes what the hardware's interleaving computes.
 * One host thread per DPU, switching between tasklet stacks in user space, costs a fraction of
 * what a POSIX thread per tasklet cost (creation, futex waits and wake-ups at every barrier:
 * most of an emulated CKKS bootstrapping's time went there).
 *
 * The shim decides which tasklet may run (one waiting at a barrier that has not been released
 * may not) and saves and restores each tasklet's own state around a switch; this file only
 * owns the stacks and the switching.
 */
#ifndef PIMHE_EMU_TASKLETS_H
#define PIMHE_EMU_TASKLETS_H

#include <stdint.h>

typedef struct {
    /* Runs tasklet `id` from its start; returning ends the tasklet. */
    void (*body)(void *arg, uint32_t id);
    /* Whether tasklet `id`, paused by pimhe_tasklets_yield, may resume now. */
    int (*may_resume)(void *arg, uint32_t id);
    /* Called before tasklet `id` starts or resumes, and after it yields or ends. */
    void (*switch_in)(void *arg, uint32_t id);
    void (*switch_out)(void *arg, uint32_t id);
    void *arg;
} pimhe_tasklet_ops_t;

/* Runs tasklets 0 .. nr - 1 round robin until all have ended. Returns 0, or -1 when the host
 * could not provide the stacks (out of memory) or when every unfinished tasklet is paused and
 * none may resume (a shim bug: barriers release once all tasklets have arrived or ended). */
int pimhe_tasklets_run(uint32_t nr, const pimhe_tasklet_ops_t *ops);

/* Called by a running tasklet: gives the host thread back to the scheduler, which resumes the
 * other tasklets and comes back here once `may_resume` says so. */
void pimhe_tasklets_yield(void);

#endif /* PIMHE_EMU_TASKLETS_H */
