/*
 * clock: seconds as doubles, monotonic for intervals and deadlines, wall
 * clock (epoch) for what is logged or shared with other processes.
 */
#ifndef GPUPACK_UTIL_CLOCK_H
#define GPUPACK_UTIL_CLOCK_H

double clock_mono(void);
double clock_wall(void);

#endif
