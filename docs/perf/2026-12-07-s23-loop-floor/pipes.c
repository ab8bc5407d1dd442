// Pipe probe: 16 independent instructions of one or two kinds a loop iteration (the FMAs into
// eight accumulators), timed at 3.66 GHz; prints cycles per iteration and instructions per cycle.
#include <stdio.h>
#include <time.h>
#include <string.h>
static double now(){struct timespec t;clock_gettime(CLOCK_MONOTONIC,&t);return t.tv_sec+t.tv_nsec*1e-9;}
#define N 100000000L
#define BODY(name, ninst, asmtext) { long n=N; double a=now(); \
  __asm__ volatile("vpxor %%ymm0,%%ymm0,%%ymm0\n vpxor %%ymm1,%%ymm1,%%ymm1\n vpxor %%ymm2,%%ymm2,%%ymm2\n vpxor %%ymm3,%%ymm3,%%ymm3\n" \
  "vpxor %%ymm4,%%ymm4,%%ymm4\n vpxor %%ymm5,%%ymm5,%%ymm5\n vpxor %%ymm6,%%ymm6,%%ymm6\n vpxor %%ymm7,%%ymm7,%%ymm7\n vpxor %%ymm15,%%ymm15,%%ymm15\n" \
  "1:\n" asmtext "dec %0\n jnz 1b\n" : "+r"(n) :: "xmm0","xmm1","xmm2","xmm3","xmm4","xmm5","xmm6","xmm7","xmm8","xmm9","xmm10","xmm11","xmm12","xmm13","xmm14","xmm15"); \
  double t=now()-a; printf("%-28s %.3f cycles/iter  %.2f inst/cycle\n", name, t*3.66e9/N, ninst*N/(t*3.66e9)); }
#define CVT8 "vcvtdq2ps %%ymm15,%%ymm0\n vcvtdq2ps %%ymm15,%%ymm1\n vcvtdq2ps %%ymm15,%%ymm2\n vcvtdq2ps %%ymm15,%%ymm3\n vcvtdq2ps %%ymm15,%%ymm4\n vcvtdq2ps %%ymm15,%%ymm5\n vcvtdq2ps %%ymm15,%%ymm6\n vcvtdq2ps %%ymm15,%%ymm7\n"
#define SHUF8 "vpshufb %%ymm15,%%ymm15,%%ymm8\n vpshufb %%ymm15,%%ymm15,%%ymm9\n vpshufb %%ymm15,%%ymm15,%%ymm10\n vpshufb %%ymm15,%%ymm15,%%ymm11\n vpshufb %%ymm15,%%ymm15,%%ymm12\n vpshufb %%ymm15,%%ymm15,%%ymm13\n vpshufb %%ymm15,%%ymm15,%%ymm14\n vpshufb %%ymm15,%%ymm15,%%ymm8\n"
#define FMA8 "vfmadd231ps %%ymm15,%%ymm15,%%ymm0\n vfmadd231ps %%ymm15,%%ymm15,%%ymm1\n vfmadd231ps %%ymm15,%%ymm15,%%ymm2\n vfmadd231ps %%ymm15,%%ymm15,%%ymm3\n vfmadd231ps %%ymm15,%%ymm15,%%ymm4\n vfmadd231ps %%ymm15,%%ymm15,%%ymm5\n vfmadd231ps %%ymm15,%%ymm15,%%ymm6\n vfmadd231ps %%ymm15,%%ymm15,%%ymm7\n"
#define SLLV8 "vpsllvd %%ymm15,%%ymm15,%%ymm8\n vpsllvd %%ymm15,%%ymm15,%%ymm9\n vpsllvd %%ymm15,%%ymm15,%%ymm10\n vpsllvd %%ymm15,%%ymm15,%%ymm11\n vpsllvd %%ymm15,%%ymm15,%%ymm12\n vpsllvd %%ymm15,%%ymm15,%%ymm13\n vpsllvd %%ymm15,%%ymm15,%%ymm14\n vpsllvd %%ymm15,%%ymm15,%%ymm8\n"
#define SLLI8 "vpslld $24,%%ymm15,%%ymm8\n vpslld $24,%%ymm15,%%ymm9\n vpslld $24,%%ymm15,%%ymm10\n vpslld $24,%%ymm15,%%ymm11\n vpslld $24,%%ymm15,%%ymm12\n vpslld $24,%%ymm15,%%ymm13\n vpslld $24,%%ymm15,%%ymm14\n vpslld $24,%%ymm15,%%ymm8\n"
#define AND8 "vpand %%ymm15,%%ymm15,%%ymm8\n vpand %%ymm15,%%ymm15,%%ymm9\n vpand %%ymm15,%%ymm15,%%ymm10\n vpand %%ymm15,%%ymm15,%%ymm11\n vpand %%ymm15,%%ymm15,%%ymm12\n vpand %%ymm15,%%ymm15,%%ymm13\n vpand %%ymm15,%%ymm15,%%ymm14\n vpand %%ymm15,%%ymm15,%%ymm8\n"
int main(){
 BODY("cvt", 16, CVT8 CVT8)
 BODY("shuf", 16, SHUF8 SHUF8)
 BODY("fma", 16, FMA8 FMA8)
 BODY("sllv", 16, SLLV8 SLLV8)
 BODY("slli", 16, SLLI8 SLLI8)
 BODY("and", 16, AND8 AND8)
 BODY("cvt+shuf", 16, CVT8 SHUF8)
 BODY("cvt+fma", 16, CVT8 FMA8)
 BODY("shuf+fma", 16, SHUF8 FMA8)
 BODY("cvt+slli", 16, CVT8 SLLI8)
 BODY("shuf+slli", 16, SHUF8 SLLI8)
 BODY("fma+slli", 16, FMA8 SLLI8)
 BODY("cvt+shuf+fma", 24, CVT8 SHUF8 FMA8)
 BODY("cvt+shuf+fma+and", 32, CVT8 SHUF8 FMA8 AND8)
 BODY("cvt+and", 16, CVT8 AND8)
 BODY("fma+and", 16, FMA8 AND8)
 BODY("shuf+and", 16, SHUF8 AND8)
}
