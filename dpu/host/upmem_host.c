/* See upmem_host.h. Plain C11 against UPMEM's SDK headers. */
#include "upmem_host.h"

#include <dpu.h>
#include <stdlib.h>

struct pimhe_upmem {
    struct dpu_set_t set;
    uint32_t nr_dpus;
    struct dpu_set_t *dpus; /* one handle per DPU, in DPU_FOREACH order */
};

int pimhe_upmem_open(uint32_t nr_dpus, const char *binary_path, pimhe_upmem **out) {
    pimhe_upmem *s = calloc(1, sizeof *s);
    if (s == NULL) {
        return DPU_ERR_SYSTEM;
    }
    dpu_error_t err = dpu_alloc(nr_dpus, NULL, &s->set);
    if (err == DPU_OK) {
        err = dpu_load(s->set, binary_path, NULL);
        if (err == DPU_OK) {
            err = dpu_get_nr_dpus(s->set, &s->nr_dpus);
        }
        if (err == DPU_OK) {
            s->dpus = calloc(s->nr_dpus, sizeof *s->dpus);
            err = s->dpus == NULL ? DPU_ERR_SYSTEM : DPU_OK;
        }
        if (err == DPU_OK) {
            struct dpu_set_t dpu;
            uint32_t i;
            DPU_FOREACH(s->set, dpu, i) { s->dpus[i] = dpu; }
            *out = s;
            return DPU_OK;
        }
        dpu_free(s->set);
    }
    free(s->dpus);
    free(s);
    return err;
}

uint32_t pimhe_upmem_len(const pimhe_upmem *set) { return set->nr_dpus; }

int pimhe_upmem_write(pimhe_upmem *set, uint32_t dpu, uint32_t offset, const void *src, size_t len) {
    if (dpu >= set->nr_dpus) {
        return PIMHE_UPMEM_ERR_NO_SUCH_DPU;
    }
    return dpu_copy_to(set->dpus[dpu], DPU_MRAM_HEAP_POINTER_NAME, offset, src, len);
}

int pimhe_upmem_read(pimhe_upmem *set, uint32_t dpu, uint32_t offset, void *dst, size_t len) {
    if (dpu >= set->nr_dpus) {
        return PIMHE_UPMEM_ERR_NO_SUCH_DPU;
    }
    return dpu_copy_from(set->dpus[dpu], DPU_MRAM_HEAP_POINTER_NAME, offset, dst, len);
}

int pimhe_upmem_launch(pimhe_upmem *set) { return dpu_launch(set->set, DPU_SYNCHRONOUS); }

void pimhe_upmem_close(pimhe_upmem *set) {
    if (set != NULL) {
        dpu_free(set->set);
        free(set->dpus);
        free(set);
    }
}
