mov    %rax,0x160(%rsp)
lea    (%rcx,%r15,1),%rax
add    $0x800,%rax
cmp    $0x1000,%r9
jbe    1aa600 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1ba0>
prefetcht1 (%rax)
test   %r8b,%r8b
je     1aa608 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1ba8>
jmp    1aa616 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1bb6>
test   %r8b,%r8b
jne    1aa616 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1bb6>
cmp    %r13,%rsi
jae    1aa640 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1be0>
mov    -0x8200(%r14,%rsi,1),%ebx
lea    0x204(%rsi),%rax
cmp    %r13,%rax
mov    %rsi,0x120(%rsp)
jbe    1aa656 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1bf6>
jmp    1aa665 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1c05>
mov    -0x8000(%r14,%rsi,1),%eax
shl    $0x20,%rax
or     %rax,%rbx
lea    (%rcx,%r15,1),%rsi
lea    0x3f(%r15),%rax
cmp    %rdx,%rax
jb     1aa770 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1d10>
vmovq  %rbx,%xmm0
and    %r11,%rbx
movabs $0x101010101010101,%rax
add    %rax,%rbx
test   %r10,%rbx
je     1aa410 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x19b0>
vpmovzxbd %xmm0,%ymm1
vpunpcklbw %xmm0,%xmm0,%xmm0
vpsraw $0x1,%xmm0,%xmm0
vpand  -0x198811(%rip),%xmm0,%xmm0
vcvtph2ps %xmm0,%ymm0
mov    0x160(%rsp),%rax
cmp    %rax,%rdi
je     1aba13 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2fb3>
vmovdqu (%rsi),%ymm1
vpsrlw $0x4,%ymm1,%ymm2
vpand  %ymm2,%ymm8,%ymm2
vpshufb %ymm2,%ymm9,%ymm3
vpand  %ymm1,%ymm8,%ymm1
vpshufb %ymm1,%ymm9,%ymm2
vpshufb %ymm11,%ymm2,%ymm4
vpslld $0x18,%ymm2,%ymm1
vcvtdq2ps %ymm1,%ymm1
vmulps (%r12,%r15,8),%ymm1,%ymm1
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0x40(%r12,%r15,8),%ymm4,%ymm1
vpand  %ymm2,%ymm10,%ymm4
vpshufb %ymm12,%ymm2,%ymm2
vcvtdq2ps %ymm2,%ymm2
vmulps 0x20(%r12,%r15,8),%ymm2,%ymm2
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0x60(%r12,%r15,8),%ymm4,%ymm2
vpslld $0x18,%ymm3,%ymm4
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0x80(%r12,%r15,8),%ymm4,%ymm1
vpshufb %ymm12,%ymm3,%ymm4
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0xa0(%r12,%r15,8),%ymm4,%ymm2
vpshufb %ymm11,%ymm3,%ymm4
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0xc0(%r12,%r15,8),%ymm4,%ymm1
vmovdqu 0x20(%rsi),%ymm4
vpand  %ymm3,%ymm10,%ymm3
vcvtdq2ps %ymm3,%ymm3
vfmadd231ps 0xe0(%r12,%r15,8),%ymm3,%ymm2
vpermps %ymm0,%ymm7,%ymm3
vfmadd213ps %ymm14,%ymm3,%ymm1
vfmadd213ps %ymm15,%ymm3,%ymm2
vpsrlw $0x4,%ymm4,%ymm3
vpand  %ymm3,%ymm8,%ymm3
vpshufb %ymm3,%ymm9,%ymm3
vpand  %ymm4,%ymm8,%ymm4
vpshufb %ymm4,%ymm9,%ymm4
vpshufb %ymm11,%ymm4,%ymm5
vcvtdq2ps %ymm5,%ymm5
vpslld $0x18,%ymm4,%ymm6
vcvtdq2ps %ymm6,%ymm6
vmulps 0x100(%r12,%r15,8),%ymm6,%ymm14
vfmadd231ps 0x140(%r12,%r15,8),%ymm5,%ymm14
vpand  %ymm4,%ymm10,%ymm5
vcvtdq2ps %ymm5,%ymm5
vpshufb %ymm12,%ymm4,%ymm4
vcvtdq2ps %ymm4,%ymm4
vmulps 0x120(%r12,%r15,8),%ymm4,%ymm15
vfmadd231ps 0x160(%r12,%r15,8),%ymm5,%ymm15
vpslld $0x18,%ymm3,%ymm4
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0x180(%r12,%r15,8),%ymm4,%ymm14
vpshufb %ymm12,%ymm3,%ymm4
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0x1a0(%r12,%r15,8),%ymm4,%ymm15
vpshufb %ymm11,%ymm3,%ymm4
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0x1c0(%r12,%r15,8),%ymm4,%ymm14
vpand  %ymm3,%ymm10,%ymm3
vcvtdq2ps %ymm3,%ymm3
vfmadd231ps 0x1e0(%r12,%r15,8),%ymm3,%ymm15
vpermps %ymm0,%ymm13,%ymm0
vfmadd213ps %ymm1,%ymm0,%ymm14
vfmadd213ps %ymm2,%ymm0,%ymm15
inc    %rax
add    $0x40,%r15
mov    0x120(%rsp),%rsi
add    $0x400,%rsi
cmp    %rax,0x100(%rsp)
je     1aa840 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1de0>
