// <cublas_v2.h> under the emulator: the cuBLAS API of cublas_api.h (the
// toolkit's v2 macros are not needed: its documented names are the functions
// here).  See cublas_api.h for what is emulated.
#pragma once

#include <cublas_api.h>
