/* `cudnnspy scan`: every cuDNN copy on the machine, and what conflicts between them. */
#ifndef CUDNNSPY_SCAN_H
#define CUDNNSPY_SCAN_H

/* argv[0] is "scan"; returns the exit status (0, or 2 for a usage error). */
int cudnnspy_scan_main(int argc, char **argv);

#endif
