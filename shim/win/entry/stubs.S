/*
 * The undeclared names' first call on Windows (g_stubs_win.S jumps here with the function's id in eax
 * while copy 0's slot is empty): the four argument registers of the Microsoft x64 convention, and the
 * four XMM ones, kept across spy_win_stub_real, then a jump to what it returns, which finds the caller's
 * stack arguments where they were.
 */
	.text
	.globl _spy_win_stub_resolve
	.def _spy_win_stub_resolve; .scl 2; .type 32; .endef
_spy_win_stub_resolve:
	/* 8 (the return address) + 0x88: 16-aligned at the call; 0x20 of shadow space for the callee. */
	subq $0x88, %rsp
	movq %rcx, 0x20(%rsp)
	movq %rdx, 0x28(%rsp)
	movq %r8, 0x30(%rsp)
	movq %r9, 0x38(%rsp)
	movdqu %xmm0, 0x40(%rsp)
	movdqu %xmm1, 0x50(%rsp)
	movdqu %xmm2, 0x60(%rsp)
	movdqu %xmm3, 0x70(%rsp)
	movl %eax, %ecx
	call spy_win_stub_real
	movq 0x20(%rsp), %rcx
	movq 0x28(%rsp), %rdx
	movq 0x30(%rsp), %r8
	movq 0x38(%rsp), %r9
	movdqu 0x40(%rsp), %xmm0
	movdqu 0x50(%rsp), %xmm1
	movdqu 0x60(%rsp), %xmm2
	movdqu 0x70(%rsp), %xmm3
	addq $0x88, %rsp
	jmp *%rax
