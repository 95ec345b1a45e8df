/*
 * First call of a jump stub (g_stubs.S): save every argument register,
 * ask spy_stub_resolve(id) for the target, restore, jump. The stub's
 * arguments are unknown, so all of them must survive untouched.
 */
#if defined(__x86_64__)
	.text
	.hidden spy_stub_resolve
	.globl _spy_stub_resolve_x86_64
	.hidden _spy_stub_resolve_x86_64
	.type _spy_stub_resolve_x86_64, @function
_spy_stub_resolve_x86_64:
	pushq %rdi
	pushq %rsi
	pushq %rdx
	pushq %rcx
	pushq %r8
	pushq %r9
	pushq %rax
	subq $128, %rsp
	movdqu %xmm0, 0(%rsp)
	movdqu %xmm1, 16(%rsp)
	movdqu %xmm2, 32(%rsp)
	movdqu %xmm3, 48(%rsp)
	movdqu %xmm4, 64(%rsp)
	movdqu %xmm5, 80(%rsp)
	movdqu %xmm6, 96(%rsp)
	movdqu %xmm7, 112(%rsp)
	movl %r11d, %edi
	call spy_stub_resolve
	movq %rax, %r11
	movdqu 0(%rsp), %xmm0
	movdqu 16(%rsp), %xmm1
	movdqu 32(%rsp), %xmm2
	movdqu 48(%rsp), %xmm3
	movdqu 64(%rsp), %xmm4
	movdqu 80(%rsp), %xmm5
	movdqu 96(%rsp), %xmm6
	movdqu 112(%rsp), %xmm7
	addq $128, %rsp
	popq %rax
	popq %r9
	popq %r8
	popq %rcx
	popq %rdx
	popq %rsi
	popq %rdi
	jmp *%r11
	.size _spy_stub_resolve_x86_64, .-_spy_stub_resolve_x86_64
#elif defined(__aarch64__)
	.text
	.hidden spy_stub_resolve
	.globl _spy_stub_resolve_aarch64
	.hidden _spy_stub_resolve_aarch64
	.type _spy_stub_resolve_aarch64, %function
_spy_stub_resolve_aarch64:
	stp x29, x30, [sp, #-224]!
	mov x29, sp
	stp x0, x1, [sp, #16]
	stp x2, x3, [sp, #32]
	stp x4, x5, [sp, #48]
	stp x6, x7, [sp, #64]
	str x8, [sp, #80]
	stp q0, q1, [sp, #96]
	stp q2, q3, [sp, #128]
	stp q4, q5, [sp, #160]
	stp q6, q7, [sp, #192]
	mov x0, x16
	bl spy_stub_resolve
	mov x16, x0
	ldp x0, x1, [sp, #16]
	ldp x2, x3, [sp, #32]
	ldp x4, x5, [sp, #48]
	ldp x6, x7, [sp, #64]
	ldr x8, [sp, #80]
	ldp q0, q1, [sp, #96]
	ldp q2, q3, [sp, #128]
	ldp q4, q5, [sp, #160]
	ldp q6, q7, [sp, #192]
	ldp x29, x30, [sp], #224
	br x16
	.size _spy_stub_resolve_aarch64, .-_spy_stub_resolve_aarch64
#endif
	.section .note.GNU-stack,"",%progbits
