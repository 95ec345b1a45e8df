#ifndef CUDNNSPY_DUMP_H
#define CUDNNSPY_DUMP_H

/* `cudnnspy dump`: argv without the command's own name. */
int cudnnspy_dump_main(int argc, char **argv);

#endif
