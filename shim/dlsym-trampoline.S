/*
 * The exported dlsym and dlopen of the preload library. It asks spy_dlsym_hook()
 * (dlsym.c) and either returns its answer or jumps to the real dlsym with
 * the caller's return address still in place: glibc decides what RTLD_NEXT
 * means from that address, so a call from C would make every library's
 * RTLD_NEXT lookups relative to the spy. dlopen likewise: glibc searches the
 * caller's RPATH/RUNPATH ($ORIGIN), so a name without a slash must be
 * opened from the caller's frame (spy_dlopen_hook in dlsym.c).
 */
#if defined(__x86_64__)
	.text
	.hidden spy_dlsym_hook
	.hidden spy_dlsym_pass
	.hidden spy_real_dlsym_ptr
	.globl dlsym
	.type dlsym, @function
dlsym:
	.cfi_startproc
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	movq 24(%rsp), %rdx
	call spy_dlsym_hook
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
1:	jmp *spy_real_dlsym_ptr(%rip)
	.cfi_endproc
	.size dlsym, .-dlsym
	.hidden spy_dlopen_hook
	.hidden spy_real_dlopen_ptr
	.globl dlopen
	.type dlopen, @function
dlopen:
	.cfi_startproc
	pushq %rdi
	.cfi_adjust_cfa_offset 8
	pushq %rsi
	.cfi_adjust_cfa_offset 8
	subq $8, %rsp
	.cfi_adjust_cfa_offset 8
	movq 24(%rsp), %rdx
	call spy_dlopen_hook
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
1:	jmp *spy_real_dlopen_ptr(%rip)
	.cfi_endproc
	.size dlopen, .-dlopen
#elif defined(__aarch64__)
	.text
	.hidden spy_dlsym_hook
	.hidden spy_dlsym_pass
	.hidden spy_real_dlsym_ptr
	.globl dlsym
	.type dlsym, %function
dlsym:
	.cfi_startproc
	stp x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	stp x0, x1, [sp, #16]
	mov x2, x30
	bl spy_dlsym_hook
	adrp x9, spy_dlsym_pass
	add x9, x9, :lo12:spy_dlsym_pass
	cmp x0, x9
	b.eq 1f
	ldp x29, x30, [sp], #32
	ret
1:	ldp x0, x1, [sp, #16]
	ldp x29, x30, [sp], #32
	adrp x9, spy_real_dlsym_ptr
	ldr x9, [x9, :lo12:spy_real_dlsym_ptr]
	br x9
	.cfi_endproc
	.size dlsym, .-dlsym
	.hidden spy_dlopen_hook
	.hidden spy_real_dlopen_ptr
	.globl dlopen
	.type dlopen, %function
dlopen:
	.cfi_startproc
	stp x29, x30, [sp, #-32]!
	.cfi_def_cfa_offset 32
	.cfi_offset 29, -32
	.cfi_offset 30, -24
	mov x29, sp
	stp x0, x1, [sp, #16]
	mov x2, x30
	bl spy_dlopen_hook
	adrp x9, spy_dlsym_pass
	add x9, x9, :lo12:spy_dlsym_pass
	cmp x0, x9
	b.eq 1f
	ldp x29, x30, [sp], #32
	ret
1:	ldp x0, x1, [sp, #16]
	ldp x29, x30, [sp], #32
	adrp x9, spy_real_dlopen_ptr
	ldr x9, [x9, :lo12:spy_real_dlopen_ptr]
	br x9
	.cfi_endproc
	.size dlopen, .-dlopen
#else
#error "the dlsym trampoline exists for x86_64 and aarch64 only"
#endif
	.section .note.GNU-stack,"",%progbits
