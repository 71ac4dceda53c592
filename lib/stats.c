/* stats.c - placeholder, being written. SPDX-License-Identifier: BSD-2-Clause */
#include "internal.h"
