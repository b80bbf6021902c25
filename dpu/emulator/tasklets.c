/*
 * tasklets.c: one DPU's tasklets as coroutines on the calling host thread (see tasklets.h).
 *
 * makecontext prepares each tasklet's stack, and POSIX _setjmp/_longjmp switch between the
 * stacks: they save and restore the registers only, where swapcontext also saves and restores
 * the signal mask, a system call on every switch (about a third of the time of an emulated
 * HELR training with a bootstrapping, by perf: its NTTs meet a barrier at every stage).
 * Jumping to another stack is what coroutine libraries built on these calls do (GNU Pth's
 * "mcsc" creation with "sjlj" switching); ISO C leaves it undefined, and glibc's fortified
 * _longjmp refuses it (it only allows unwinding the current stack), so this file is built
 * without _FORTIFY_SOURCE. The stacks are mapped once per host thread, each below a guard
 * page, and reused by every launch that thread runs.
 */
#undef _FORTIFY_SOURCE /* before any header: see above */
#define _XOPEN_SOURCE 700 /* ucontext.h, _setjmp, MAP_ANONYMOUS through sys/mman.h on glibc */
#define _DEFAULT_SOURCE

#include "tasklets.h"

#include <pthread.h>
#include <setjmp.h>
#include <stdlib.h>
#include <sys/mman.h>
#include <ucontext.h>
#include <unistd.h>

#include "pimhe_emu.h"

/* _setjmp returns twice, and C lets the compiler clobber the locals of a function that calls
 * it: the helpers that call it hold no locals that change, and stay out of line. */
#if defined(__GNUC__)
#define OUT_OF_LINE __attribute__((noinline))
#else
#define OUT_OF_LINE
#endif

/* Host stack of one tasklet: the kernel's frames plus the host's MRAM callback (Rust), whose
 * depth is what needs room. The DPU's own stack budget is checked in WRAM, not here. */
#define TASKLET_HOST_STACK (256u << 10)

typedef struct {
    jmp_buf scheduler;                        /* where the scheduler waits while a tasklet runs */
    jmp_buf tasklets[PIMHE_EMU_MAX_TASKLETS]; /* where each paused tasklet waits */
    ucontext_t entry;                         /* enters a tasklet's stack the first time */
    unsigned char ended[PIMHE_EMU_MAX_TASKLETS];
    uint8_t *stacks; /* PIMHE_EMU_MAX_TASKLETS slots of guard page + TASKLET_HOST_STACK */
    size_t slot_bytes, guard_bytes;
    const pimhe_tasklet_ops_t *ops;
    uint32_t current;
} host_thread_t;

static _Thread_local host_thread_t *tl_host;
static pthread_key_t host_key;
static pthread_once_t host_key_once = PTHREAD_ONCE_INIT;

static void host_free(void *p) {
    host_thread_t *h = (host_thread_t *)p;
    munmap(h->stacks, h->slot_bytes * PIMHE_EMU_MAX_TASKLETS);
    free(h);
}

static void host_key_create(void) {
    (void)pthread_key_create(&host_key, host_free);
}

/* This thread's stacks and contexts, made on its first launch; NULL if the host is out of
 * memory. */
static host_thread_t *host_thread(void) {
    if (tl_host != NULL) {
        return tl_host;
    }
    if (pthread_once(&host_key_once, host_key_create) != 0) {
        return NULL;
    }
    host_thread_t *h = (host_thread_t *)calloc(1, sizeof *h);
    if (h == NULL) {
        return NULL;
    }
    const long page = sysconf(_SC_PAGESIZE);
    h->guard_bytes = page > 0 ? (size_t)page : 4096u;
    h->slot_bytes = h->guard_bytes + TASKLET_HOST_STACK;
    void *map = mmap(NULL, h->slot_bytes * PIMHE_EMU_MAX_TASKLETS, PROT_READ | PROT_WRITE,
                     MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
    if (map == MAP_FAILED) {
        free(h);
        return NULL;
    }
    h->stacks = (uint8_t *)map;
    for (uint32_t t = 0; t < PIMHE_EMU_MAX_TASKLETS; t++) {
        /* Stacks grow down: the guard page sits below each slot's stack. */
        if (mprotect(h->stacks + t * h->slot_bytes, h->guard_bytes, PROT_NONE) != 0) {
            host_free(h);
            return NULL;
        }
    }
    if (pthread_setspecific(host_key, h) != 0) {
        host_free(h);
        return NULL;
    }
    tl_host = h;
    return h;
}

/* Every tasklet starts here, on its own stack, and ends by jumping back to the scheduler
 * (returning would need uc_link's context, which the jumps leave stale). */
static _Noreturn void tasklet_start(void) {
    host_thread_t *h = tl_host;
    const uint32_t id = h->current;
    h->ops->body(h->ops->arg, id);
    h->ended[id] = 1;
    _longjmp(h->scheduler, 1);
}

/* Runs tasklet t from its start until it yields or ends; 0, or -1 when its context could not be
 * made. setcontext saves nothing, so the scheduler's place is the _setjmp. */
static OUT_OF_LINE int start(host_thread_t *h, uint32_t t) {
    if (_setjmp(h->scheduler) != 0) {
        return 0;
    }
    ucontext_t *u = &h->entry;
    if (getcontext(u) != 0) {
        return -1;
    }
    u->uc_stack.ss_sp = h->stacks + t * h->slot_bytes + h->guard_bytes;
    u->uc_stack.ss_size = TASKLET_HOST_STACK;
    u->uc_link = NULL;
    makecontext(u, tasklet_start, 0);
    (void)setcontext(u); /* returns only on failure */
    return -1;
}

/* Resumes tasklet t, paused in pimhe_tasklets_yield, until it yields again or ends. */
static OUT_OF_LINE void resume(host_thread_t *h, uint32_t t) {
    if (_setjmp(h->scheduler) == 0) {
        _longjmp(h->tasklets[t], 1);
    }
}

int pimhe_tasklets_run(uint32_t nr, const pimhe_tasklet_ops_t *ops) {
    host_thread_t *h = host_thread();
    if (h == NULL || nr > PIMHE_EMU_MAX_TASKLETS) {
        return -1;
    }
    h->ops = ops;
    for (uint32_t t = 0; t < nr; t++) {
        h->ended[t] = 0;
    }
    /* started[t]: a tasklet that has not run yet may always start. */
    unsigned char started[PIMHE_EMU_MAX_TASKLETS] = {0};
    uint32_t ended = 0;
    while (ended < nr) {
        int ran = 0;
        for (uint32_t t = 0; t < nr; t++) {
            if (h->ended[t] || (started[t] && !ops->may_resume(ops->arg, t))) {
                continue;
            }
            h->current = t;
            ops->switch_in(ops->arg, t);
            if (!started[t]) {
                started[t] = 1;
                if (start(h, t) != 0) {
                    return -1;
                }
            } else {
                resume(h, t);
            }
            ops->switch_out(ops->arg, t);
            ended += h->ended[t];
            ran = 1;
        }
        if (!ran) {
            return -1;
        }
    }
    return 0;
}

OUT_OF_LINE void pimhe_tasklets_yield(void) {
    host_thread_t *h = tl_host;
    if (_setjmp(h->tasklets[h->current]) == 0) {
        _longjmp(h->scheduler, 1);
    }
}
