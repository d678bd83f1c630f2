#include "server/setup/build_info.h"
#include "core/attend_kernels.h"
#include "server/setup/blas_setup.h"

#include <cblas.h>

build_info build_info_apply(arch_simd most)
{
    arch_simd_limit(most);
    return (build_info){
        .arch = arch_name(),
        .cpu = arch_simd_name(arch_simd_cpu()),
        .simd = arch_simd_name(arch_simd_level()),
        /* the kernels' build is the level's (core/attend_kernels.c) */
        .products = attend_kernels_usable() ? arch_simd_name(arch_simd_level())
                                            : "openblas",
        .blas_core = blas_setup_corename(),
    };
}

void build_info_print(FILE *out, const build_info *info)
{
    fprintf(out,
            "architecture: %s (this CPU runs %s)\n"
            "kernels: loops %s, products %s\n"
            "BLAS: OpenBLAS %s, core %s\n",
            info->arch, info->cpu, info->simd, info->products,
            openblas_get_config(), info->blas_core);
}
