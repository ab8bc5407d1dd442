cmp    0xa0(%rsp),%rax
ja     7000b <pulp::x86::v3::V3::vectorize::imp+0x1bd4b>
cmp    $0x7f,%rcx
jbe    7004b <pulp::x86::v3::V3::vectorize::imp+0x1bd8b>
lea    (%r8,%r13,1),%r12
lea    (%r8,%r13,1),%rsi
add    $0x50,%rsi
prefetcht0 -0x4f(%rbx,%r8,1)
prefetcht0 -0xf(%rbx,%r8,1)
prefetcht0 (%rbx,%r8,1)
cmp    $0xffffffffffffffaf,%r12
ja     70448 <pulp::x86::v3::V3::vectorize::imp+0x1c188>
cmp    0x3a0(%rsp),%rsi
ja     70448 <pulp::x86::v3::V3::vectorize::imp+0x1c188>
mov    0x40(%rsp),%rsi
cmp    %rsi,%r9
jae    70e32 <pulp::x86::v3::V3::vectorize::imp+0x1cb72>
lea    0x1(%r9),%rdi
cmp    %rsi,%rdi
jae    70e35 <pulp::x86::v3::V3::vectorize::imp+0x1cb75>
vbroadcasti128 (%r15,%r8,1),%ymm4
vpsllvd -0x4f597(%rip),%ymm4,%ymm2        # 123e0 <anon.07c772019d7c4df391d507588b81f1f1.3.llvm.13286917665195720445+0xd6f>
vmovdqa 0xc0(%rsp),%ymm8
vpand  %ymm2,%ymm8,%ymm2
vmovdqu -0x40(%r15,%r8,1),%ymm6
vmovdqu -0x20(%r15,%r8,1),%ymm5
vpsrlw $0x1,%ymm5,%ymm3
vmovdqa 0x120(%rsp),%ymm9
vpand  %ymm3,%ymm9,%ymm3
vpor   %ymm3,%ymm2,%ymm2
vpsllvd -0x4f691(%rip),%ymm4,%ymm3        # 12320 <anon.07c772019d7c4df391d507588b81f1f1.3.llvm.13286917665195720445+0xcaf>
vpand  %ymm3,%ymm8,%ymm3
vpsrlw $0x1,%ymm6,%ymm7
vpand  %ymm7,%ymm9,%ymm7
vpor   %ymm7,%ymm3,%ymm3
vpsllvd -0x4f36b(%rip),%ymm4,%ymm7        # 12660 <anon.07c772019d7c4df391d507588b81f1f1.3.llvm.13286917665195720445+0xfef>
vpand  %ymm7,%ymm8,%ymm7
vpsllw $0x3,%ymm5,%ymm5
vpand  %ymm5,%ymm9,%ymm5
vpor   %ymm5,%ymm7,%ymm5
vpsllvd -0x4f725(%rip),%ymm4,%ymm4        # 122c0 <anon.07c772019d7c4df391d507588b81f1f1.3.llvm.13286917665195720445+0xc4f>
vpand  %ymm4,%ymm8,%ymm4
vpsllw $0x3,%ymm6,%ymm6
vpand  %ymm6,%ymm9,%ymm6
vpor   %ymm6,%ymm4,%ymm6
vmovdqa 0x100(%rsp),%ymm8
vpand  %ymm6,%ymm8,%ymm4
vcvtdq2ps %ymm4,%ymm7
vmovdqa -0x4f8af(%rip),%ymm10        # 12160 <anon.07c772019d7c4df391d507588b81f1f1.3.llvm.13286917665195720445+0xaef>
vpshufb %ymm10,%ymm6,%ymm4
vcvtdq2ps %ymm4,%ymm4
vmulps 0x20(%r14,%rax,4),%ymm4,%ymm4
vfmadd231ps 0x60(%r14,%rax,4),%ymm7,%ymm4
vpshufb %ymm10,%ymm5,%ymm7
vcvtdq2ps %ymm7,%ymm7
vfmadd231ps 0xa0(%r14,%rax,4),%ymm7,%ymm4
vpand  %ymm5,%ymm8,%ymm7
vcvtdq2ps %ymm7,%ymm7
vfmadd231ps 0xe0(%r14,%rax,4),%ymm7,%ymm4
mov    0x60(%rsp),%rsi
vbroadcastss (%rsi,%r9,4),%ymm7
vfmadd213ps %ymm1,%ymm7,%ymm4
vmovdqa -0x4f5e3(%rip),%ymm9        # 12480 <anon.07c772019d7c4df391d507588b81f1f1.3.llvm.13286917665195720445+0xe0f>
vpshufb %ymm9,%ymm6,%ymm1
vpslld $0x18,%ymm6,%ymm6
vcvtdq2ps %ymm6,%ymm6
vmulps (%r14,%rax,4),%ymm6,%ymm6
vcvtdq2ps %ymm1,%ymm1
vfmadd231ps 0x40(%r14,%rax,4),%ymm1,%ymm6
vpslld $0x18,%ymm5,%ymm1
vcvtdq2ps %ymm1,%ymm1
vfmadd231ps 0x80(%r14,%rax,4),%ymm1,%ymm6
vpshufb %ymm9,%ymm5,%ymm1
vcvtdq2ps %ymm1,%ymm1
vfmadd231ps 0xc0(%r14,%rax,4),%ymm1,%ymm6
vfmadd213ps %ymm0,%ymm7,%ymm6
vpand  %ymm3,%ymm8,%ymm0
vcvtdq2ps %ymm0,%ymm0
vpshufb %ymm10,%ymm3,%ymm1
vcvtdq2ps %ymm1,%ymm1
vmulps 0x120(%r14,%rax,4),%ymm1,%ymm5
vfmadd231ps 0x160(%r14,%rax,4),%ymm0,%ymm5
vpshufb %ymm9,%ymm3,%ymm0
vcvtdq2ps %ymm0,%ymm0
vpslld $0x18,%ymm3,%ymm1
vcvtdq2ps %ymm1,%ymm1
vmulps 0x100(%r14,%rax,4),%ymm1,%ymm3
vfmadd231ps 0x140(%r14,%rax,4),%ymm0,%ymm3
vpshufb %ymm10,%ymm2,%ymm0
vcvtdq2ps %ymm0,%ymm1
vfmadd132ps 0x1a0(%r14,%rax,4),%ymm5,%ymm1
vpand  %ymm2,%ymm8,%ymm0
vcvtdq2ps %ymm0,%ymm0
vfmadd231ps 0x1e0(%r14,%rax,4),%ymm0,%ymm1
vpslld $0x18,%ymm2,%ymm0
vcvtdq2ps %ymm0,%ymm0
vfmadd132ps 0x180(%r14,%rax,4),%ymm3,%ymm0
vpshufb %ymm9,%ymm2,%ymm2
vcvtdq2ps %ymm2,%ymm2
vfmadd231ps 0x1c0(%r14,%rax,4),%ymm2,%ymm0
vbroadcastss 0x4(%rsi,%r9,4),%ymm2
vfmadd213ps %ymm6,%ymm2,%ymm0
vfmadd213ps %ymm4,%ymm2,%ymm1
add    $0x2,%r9
add    $0x50,%r8
sub    $0xffffffffffffff80,%rax
add    $0xffffffffffffff80,%rcx
inc    %rdx
inc    %rdi
cmp    %r9,0x80(%rsp)
mov    %rdi,%r9
jne    61900 <pulp::x86::v3::V3::vectorize::imp+0xd640>
