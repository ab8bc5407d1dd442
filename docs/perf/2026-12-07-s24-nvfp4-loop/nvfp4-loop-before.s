vpunpcklbw %xmm0,%xmm0,%xmm0
vpsraw $0x1,%xmm0,%xmm0
vpand  -0x198a51(%rip),%xmm0,%xmm0
vcvtph2ps %xmm0,%ymm0
vbroadcastss -0x197e9b(%rip),%ymm1
vmulps %ymm1,%ymm0,%ymm3
vpxor  %xmm14,%xmm14,%xmm14
mov    0x100(%rsp),%rbx
cmp    %rbx,%rdi
je     1abcc3 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x3113>
vmovdqu (%rsi),%ymm1
vpsrlw $0x4,%ymm1,%ymm0
vpand  %ymm0,%ymm10,%ymm0
vpshufb %ymm0,%ymm11,%ymm4
vpbroadcastd -0x197e30(%rip),%ymm0
vpand  %ymm1,%ymm10,%ymm1
vpshufb %ymm1,%ymm11,%ymm2
vpshufb %ymm12,%ymm2,%ymm1
vcvtdq2ps %ymm1,%ymm5
vpslld $0x18,%ymm2,%ymm1
vcvtdq2ps %ymm1,%ymm1
mov    0x380(%rsp),%rax
vfmadd132ps (%rax,%r15,8),%ymm14,%ymm1
vfmadd231ps 0x40(%rax,%r15,8),%ymm5,%ymm1
vpand  %ymm0,%ymm2,%ymm5
vcvtdq2ps %ymm5,%ymm5
vpshufb %ymm13,%ymm2,%ymm2
vcvtdq2ps %ymm2,%ymm2
vfmadd132ps 0x20(%rax,%r15,8),%ymm14,%ymm2
vfmadd231ps 0x60(%rax,%r15,8),%ymm5,%ymm2
vpslld $0x18,%ymm4,%ymm5
vcvtdq2ps %ymm5,%ymm5
vfmadd231ps 0x80(%rax,%r15,8),%ymm5,%ymm1
vpshufb %ymm13,%ymm4,%ymm5
vcvtdq2ps %ymm5,%ymm5
vfmadd231ps 0xa0(%rax,%r15,8),%ymm5,%ymm2
vpshufb %ymm12,%ymm4,%ymm5
vcvtdq2ps %ymm5,%ymm5
vfmadd231ps 0xc0(%rax,%r15,8),%ymm5,%ymm1
vmovdqu 0x20(%rsi),%ymm5
vbroadcastss -0x197e02(%rip),%ymm6
vmulps %ymm6,%ymm3,%ymm3
vpand  %ymm0,%ymm4,%ymm4
vcvtdq2ps %ymm4,%ymm4
vfmadd231ps 0xe0(%rax,%r15,8),%ymm4,%ymm2
vpermps %ymm3,%ymm9,%ymm4
vfmadd213ps %ymm7,%ymm4,%ymm1
vfmadd213ps 0x160(%rsp),%ymm4,%ymm2
vpsrlw $0x4,%ymm5,%ymm4
vpand  %ymm4,%ymm10,%ymm4
vpshufb %ymm4,%ymm11,%ymm4
vpand  %ymm5,%ymm10,%ymm5
vpshufb %ymm5,%ymm11,%ymm5
vpshufb %ymm12,%ymm5,%ymm6
vcvtdq2ps %ymm6,%ymm6
vpslld $0x18,%ymm5,%ymm7
vcvtdq2ps %ymm7,%ymm7
vfmadd132ps 0x100(%rax,%r15,8),%ymm14,%ymm7
vfmadd231ps 0x140(%rax,%r15,8),%ymm6,%ymm7
vpand  %ymm0,%ymm5,%ymm6
vcvtdq2ps %ymm6,%ymm6
vpshufb %ymm13,%ymm5,%ymm5
vcvtdq2ps %ymm5,%ymm8
vfmadd132ps 0x120(%rax,%r15,8),%ymm14,%ymm8
vfmadd231ps 0x160(%rax,%r15,8),%ymm6,%ymm8
vpslld $0x18,%ymm4,%ymm5
vcvtdq2ps %ymm5,%ymm5
vfmadd231ps 0x180(%rax,%r15,8),%ymm5,%ymm7
vpshufb %ymm13,%ymm4,%ymm5
vcvtdq2ps %ymm5,%ymm5
vfmadd231ps 0x1a0(%rax,%r15,8),%ymm5,%ymm8
vpshufb %ymm12,%ymm4,%ymm5
vcvtdq2ps %ymm5,%ymm5
vfmadd231ps 0x1c0(%rax,%r15,8),%ymm5,%ymm7
vpand  %ymm0,%ymm4,%ymm0
vcvtdq2ps %ymm0,%ymm0
vfmadd231ps 0x1e0(%rax,%r15,8),%ymm0,%ymm8
vpermps %ymm3,%ymm15,%ymm0
vfmadd213ps %ymm1,%ymm0,%ymm7
vfmadd213ps %ymm2,%ymm0,%ymm8
vmovaps %ymm8,0x160(%rsp)
inc    %rbx
add    $0x40,%r15
mov    0x120(%rsp),%rsi
add    $0x400,%rsi
cmp    %rbx,0x140(%rsp)
je     1aaa90 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1ee0>
lea    (%rcx,%r15,1),%rax
add    $0x800,%rax
cmp    $0x1000,%r9
jbe    1aa870 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1cc0>
prefetcht1 (%rax)
test   %r8b,%r8b
je     1aa878 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1cc8>
jmp    1aa886 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1cd6>
test   %r8b,%r8b
jne    1aa886 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1cd6>
mov    %rbx,0x100(%rsp)
cmp    %r13,%rsi
jae    1aa8c0 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1d10>
mov    -0x8200(%r14,%rsi,1),%ebx
lea    0x204(%rsi),%rax
cmp    %r13,%rax
mov    %rsi,0x120(%rsp)
jbe    1aa8d6 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1d26>
jmp    1aa8e5 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1d35>
lea    0x204(%rsi),%rax
cmp    %r13,%rax
mov    %rsi,0x120(%rsp)
ja     1aa8e5 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1d35>
mov    -0x8000(%r14,%rsi,1),%eax
shl    $0x20,%rax
or     %rax,%rbx
vmovq  %rbx,%xmm0
and    %r11,%rbx
add    %r12,%rbx
test   %r10,%rbx
je     1aa650 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x1aa0>
