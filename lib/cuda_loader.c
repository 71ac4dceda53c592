/* cuda_loader.c - placeholder, being written. SPDX-License-Identifier: BSD-2-Clause */
#include "cuda_loader.h"
#include <stdlib.h>
void *(*gp_test_dlopen)(const char *file, int mode);
void gp_cuda_unload(gp_cuda *cuda) { free(cuda); }
