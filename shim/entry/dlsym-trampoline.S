/*
 * The exported dlsym and dlopen of the preload library. Each asks its hook
 * in dlsym.c first and either returns the hook's answer or jumps to the real
 * function with the caller's return address still in place. glibc decides
 * what RTLD_NEXT means from that address, and where a dlopen'ed name is
 * searched for (the caller's RPATH/RUNPATH, $ORIGIN): a call from C would
 * make both relative to the spy.
 */
#if defined(__x86_64__)
	.macro TRAMPOLINE name, hook, real
	.text
	.hidden \hook
	.hidden \real
	.hidden spy_dlsym_pass
	.globl \name
	.type \name, @function
\name:
	.cfi_startproc
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	movq 24(%rsp), %rdx
	call \hook
	addq $8, %rsp
	.cfi_adjust_cfa_offset -8
	popq %rsi
	.cfi_adjust_cfa_offset -8
	popq %rdi
	.cfi_adjust_cfa_offset -8
	leaq spy_dlsym_pass(%rip), %rcx
	cmpq %rcx, %rax
	je 1f
	ret
1:	jmp *\real(%rip)
	.cfi_endproc
	.size \name, .-\name
	.endm
#elif defined(__aarch64__)
	.macro TRAMPOLINE name, hook, real
	.text
	.hidden \hook
	.hidden \real
	.hidden spy_dlsym_pass
	.globl \name
	.type \name, %function
\name:
	.cfi_startproc
	stp x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	stp x0, x1, [sp, #16]
	mov x2, x30
	bl \hook
	adrp x9, spy_dlsym_pass
	add x9, x9, :lo12:spy_dlsym_pass
	cmp x0, x9
	b.eq 1f
	ldp x29, x30, [sp], #32
	ret
1:	ldp x0, x1, [sp, #16]
	ldp x29, x30, [sp], #32
	adrp x9, \real
	ldr x9, [x9, :lo12:\real]
	br x9
	.cfi_endproc
	.size \name, .-\name
	.endm
#else
#error "the dlsym trampoline exists for x86_64 and aarch64 only"
#endif

	TRAMPOLINE dlsym, spy_dlsym_hook, spy_real_dlsym_ptr
	TRAMPOLINE dlopen, spy_dlopen_hook, spy_real_dlopen_ptr

	.section .note.GNU-stack,"",%progbits
