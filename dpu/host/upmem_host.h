/* pimhe's host-side bridge to UPMEM's libdpu: a flat C API over the few SDK calls the Rust
 * runtime needs, so the Rust side never mirrors the SDK's struct layouts (dpu_set_t and its
 * iterators change between SDK versions; this file is compiled against the installed dpu.h).
 *
 * Built only with the `upmem` cargo feature of crates/pim (see crates/pim/build.rs). Every
 * function returns 0 or the libdpu error code (dpu_error_t) of the first failing call.
 * Offsets are bytes from DPU_MRAM_HEAP_POINTER, as in docs/PIM.md. Untested here: our
 * machines have no UPMEM hardware or SDK. */
#ifndef PIMHE_UPMEM_HOST_H
#define PIMHE_UPMEM_HOST_H

#include <stddef.h>
#include <stdint.h>

typedef struct pimhe_upmem pimhe_upmem;

/* Returned for a DPU index beyond the set (libdpu's own codes are >= 0). */
#define PIMHE_UPMEM_ERR_NO_SUCH_DPU (-1)

/* Allocates `nr_dpus` DPUs and loads the DPU program at `binary_path` on them. */
int pimhe_upmem_open(uint32_t nr_dpus, const char *binary_path, pimhe_upmem **out);

/* Number of DPUs allocated. */
uint32_t pimhe_upmem_len(const pimhe_upmem *set);

/* Host -> MRAM of DPU `dpu` (length and offset multiples of 8). */
int pimhe_upmem_write(pimhe_upmem *set, uint32_t dpu, uint32_t offset, const void *src, size_t len);

/* MRAM of DPU `dpu` -> host. */
int pimhe_upmem_read(pimhe_upmem *set, uint32_t dpu, uint32_t offset, void *dst, size_t len);

/* Runs the loaded program on every DPU of the set and waits for all of them. */
int pimhe_upmem_launch(pimhe_upmem *set);

/* Frees the DPUs. */
void pimhe_upmem_close(pimhe_upmem *set);

#endif
