/*
 * Prints what dlsym(RTLD_NEXT, "probe_value") finds from probe copy 1 (must
 * be copy 2's value, 2) and from copy 2 (nothing after it: -1).
 */
#include <stdio.h>

int probe_next_from_1(void);
int probe_next_from_2(void);

int
main(void)
{
	int a = probe_next_from_1();
	int b = probe_next_from_2();

	printf("next %d %d\n", a, b);
	return a == 2 && b == -1 ? 0 : 1;
}
