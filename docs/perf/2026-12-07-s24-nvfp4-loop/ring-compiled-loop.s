lea    (%rsi,%r12,1),%rax
add    $0x800,%rax
cmp    $0x1000,%r8
jbe    1ab970 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2ce0>
prefetcht1 (%rax)
test   %dil,%dil
je     1ab978 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2ce8>
jmp    1ab990 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2d00>
prefetcht0 (%rax)
test   %dil,%dil
jne    1ab990 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2d00>
mov    0xa0(%rsp),%rax
prefetcht0 0x7800(%rax,%rbx,1)
prefetcht0 0x7a00(%rax,%rbx,1)
lea    0x2(%r13),%r14
cmp    %r15,%r14
jb     1ab9b0 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2d20>
cmp    %r13,%r9
jne    1abcdb <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x304b>
jmp    1adc20 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x4f90>
cmp    0x140(%rsp),%rbx
jae    1ab9e0 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2d50>
mov    0xa0(%rsp),%rax
mov    (%rax,%rbx,1),%r15d
mov    0x10(%rsp),%rax
cmp    0x140(%rsp),%rax
jbe    1ab9f2 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2d62>
jmp    1aba08 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2d78>
mov    0x10(%rsp),%rax
cmp    0x140(%rsp),%rax
ja     1aba08 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2d78>
mov    0xa0(%rsp),%rax
mov    0x200(%rax,%rbx,1),%eax
shl    $0x20,%rax
or     %rax,%r15
lea    0xbf(%r12),%rax
add    %r12,%rsi
add    $0x80,%rsi
mov    0xc0(%rsp),%rcx
cmp    %rcx,%rax
jb     1abaf6 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2e66>
and    $0x3,%r14d
lea    (%r14,%r14,2),%rax
shl    $0x7,%eax
vmovdqu (%rsi),%ymm0
vmovdqu 0x20(%rsi),%ymm1
vpand  %ymm0,%ymm11,%ymm2
vpshufb %ymm2,%ymm13,%ymm2
vpsrlw $0x4,%ymm0,%ymm0
vpand  %ymm0,%ymm11,%ymm0
vpshufb %ymm0,%ymm13,%ymm0
vpsllw $0x8,%ymm2,%ymm3
vmovdqa %ymm3,0x540(%rsp,%rax,1)
vpand  %ymm2,%ymm12,%ymm2
vmovdqa %ymm2,0x560(%rsp,%rax,1)
vpsllw $0x8,%ymm0,%ymm2
vmovdqa %ymm2,0x580(%rsp,%rax,1)
vpand  %ymm0,%ymm12,%ymm0
vmovdqa %ymm0,0x5a0(%rsp,%rax,1)
vpand  %ymm1,%ymm11,%ymm0
vpshufb %ymm0,%ymm13,%ymm0
vpsrlw $0x4,%ymm1,%ymm1
vpand  %ymm1,%ymm11,%ymm1
vpshufb %ymm1,%ymm13,%ymm1
vpsllw $0x8,%ymm0,%ymm2
vmovdqa %ymm2,0x5c0(%rsp,%rax,1)
vpand  %ymm0,%ymm12,%ymm0
vmovdqa %ymm0,0x5e0(%rsp,%rax,1)
vpsllw $0x8,%ymm1,%ymm0
vmovdqa %ymm0,0x600(%rsp,%rax,1)
vpand  %ymm1,%ymm12,%ymm0
vmovdqa %ymm0,0x620(%rsp,%rax,1)
vmovq  %r15,%xmm0
and    %r11,%r15
movabs $0x101010101010101,%rcx
add    %rcx,%r15
test   %r10,%r15
je     1abc4a <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2fba>
vpunpcklbw %xmm0,%xmm0,%xmm0
vpsraw $0x1,%xmm0,%xmm0
vpand  -0x199fcb(%rip),%xmm0,%xmm0
vcvtph2ps %xmm0,%ymm0
vbroadcastss -0x1993f5(%rip),%ymm1
vmulps %ymm1,%ymm0,%ymm0
mov    0x80(%rsp),%rsi
mov    0x3c0(%rsp),%r15
add    %rsp,%rax
add    $0x540,%rax
vshufps $0x50,%xmm0,%xmm0,%xmm1
vpermpd $0x50,%ymm1,%ymm1
vmovaps %ymm1,0x100(%rax)
vshufps $0xfa,%xmm0,%xmm0,%xmm1
vpermpd $0x50,%ymm1,%ymm1
vmovaps %ymm1,0x120(%rax)
vshufps $0x50,%ymm0,%ymm0,%ymm1
vpermpd $0xfa,%ymm1,%ymm1
vmovaps %ymm1,0x140(%rax)
vshufps $0xfa,%ymm0,%ymm0,%ymm0
vpermpd $0xfa,%ymm0,%ymm0
vmovaps %ymm0,0x160(%rax)
cmp    %r13,%r9
je     1adc20 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x4f90>
lea    0x1(%r13),%rax
and    $0x3,%r13d
lea    0x0(,%r13,2),%rcx
add    %r13,%rcx
shl    $0x7,%ecx
vcvtph2ps 0x5b0(%rsp,%rcx,1),%ymm0
vcvtph2ps 0x5a0(%rsp,%rcx,1),%ymm1
vcvtph2ps 0x590(%rsp,%rcx,1),%ymm2
vcvtph2ps 0x580(%rsp,%rcx,1),%ymm3
vcvtph2ps 0x570(%rsp,%rcx,1),%ymm4
vcvtph2ps 0x560(%rsp,%rcx,1),%ymm5
vcvtph2ps 0x550(%rsp,%rcx,1),%ymm6
vcvtph2ps 0x540(%rsp,%rcx,1),%ymm7
vmulps (%rdx,%r12,8),%ymm7,%ymm7
vfmadd231ps 0x40(%rdx,%r12,8),%ymm5,%ymm7
vfmadd231ps 0x80(%rdx,%r12,8),%ymm3,%ymm7
vfmadd231ps 0xc0(%rdx,%r12,8),%ymm1,%ymm7
vmovaps %ymm15,%ymm1
vfmadd231ps 0x640(%rsp,%rcx,1),%ymm7,%ymm1
vmulps 0x20(%rdx,%r12,8),%ymm6,%ymm3
vfmadd231ps 0x60(%rdx,%r12,8),%ymm4,%ymm3
vfmadd231ps 0xa0(%rdx,%r12,8),%ymm2,%ymm3
vfmadd231ps 0xe0(%rdx,%r12,8),%ymm0,%ymm3
vcvtph2ps 0x5c0(%rsp,%rcx,1),%ymm0
vcvtph2ps 0x5d0(%rsp,%rcx,1),%ymm2
vcvtph2ps 0x5e0(%rsp,%rcx,1),%ymm4
vcvtph2ps 0x5f0(%rsp,%rcx,1),%ymm5
vcvtph2ps 0x600(%rsp,%rcx,1),%ymm6
vcvtph2ps 0x610(%rsp,%rcx,1),%ymm7
vcvtph2ps 0x620(%rsp,%rcx,1),%ymm8
vmovaps %ymm14,%ymm9
vcvtph2ps 0x630(%rsp,%rcx,1),%ymm10
vfmadd231ps 0x660(%rsp,%rcx,1),%ymm3,%ymm9
vmulps 0x100(%rdx,%r12,8),%ymm0,%ymm15
vfmadd231ps 0x140(%rdx,%r12,8),%ymm4,%ymm15
vfmadd231ps 0x180(%rdx,%r12,8),%ymm6,%ymm15
vfmadd231ps 0x1c0(%rdx,%r12,8),%ymm8,%ymm15
vfmadd132ps 0x680(%rsp,%rcx,1),%ymm1,%ymm15
vmulps 0x120(%rdx,%r12,8),%ymm2,%ymm14
vfmadd231ps 0x160(%rdx,%r12,8),%ymm5,%ymm14
vfmadd231ps 0x1a0(%rdx,%r12,8),%ymm7,%ymm14
vfmadd231ps 0x1e0(%rdx,%r12,8),%ymm10,%ymm14
vfmadd132ps 0x6a0(%rsp,%rcx,1),%ymm9,%ymm14
add    $0x40,%r12
add    $0x400,%rbx
addq   $0x400,0x10(%rsp)
mov    %rax,%r13
cmp    %rax,%r15
jne    1ab950 <ninfer_simd::gemv::nvfp4x86::f32_rows_v3_f16c+0x2cc0>
