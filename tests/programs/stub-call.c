/*
 * Calls the four undeclared names with integer and floating-point
 * arguments (the fake gives them a signature) and prints the results: the
 * same with and without the spy's jump stubs in between. Each is called
 * twice: the first call goes through the stub's lazy resolution.
 */
#include <stdio.h>

double cudnnGetBackdoor(long, long, long, long, long, long, double, double);
double cudnnSetBackdoor(long, long, long, long, long, long, double, double);
double cudnnSetBackdoorEx(long, long, long, long, long, long, double, double);
double cudnnGetRNNDropoutLocationsInternal(long, long, long, long, long, long, double, double);

int
main(void)
{
	for (int round = 0; round < 2; round++) {
		printf("%.2f\n", cudnnGetBackdoor(1, 2, 3, 4, 5, 6, 7.0, 8.0));
		printf("%.2f\n", cudnnSetBackdoor(10, 20, 30, 40, 50, 60, 1.5, 2.5));
		printf("%.2f\n", cudnnSetBackdoorEx(-1, -2, -3, -4, -5, -6, -7.0, -8.0));
		printf("%.2f\n", cudnnGetRNNDropoutLocationsInternal(100, 0, 0, 0, 0, 1, 0.0, 4.0));
	}
	return 0;
}
