/*
 * trace: GPUPACK_TRACE=FILE appends one line per event of a farm's
 * lifecycle (an attempt's start, its end's facts and verdict, a task
 * stopped at or let through the GPU's door, a fault seen, a hung client
 * ended), each with the seconds since the farm began. For a person
 * reading why a task ran again or was recorded; its words may change
 * between versions. Off (and free) without the variable.
 */
#ifndef GPUPACK_FARM_TRACE_H
#define GPUPACK_FARM_TRACE_H

/* Open GPUPACK_TRACE's file, if set: 0, or -1 with err set (EXIT_ENV). t0: the farm's start. */
int trace_open(double t0);
void trace_close(void);
int trace_on(void);
/* One line: "SECONDS " then the formatted event; nothing when off. */
void trace_event(double now, const char *fmt, ...) __attribute__((format(printf, 2, 3)));
/*
 * A reading of GPU gpu's driver by who ("auto", "usage") begun at t0 (monotonic):
 * a line when it took over TRACE_SLOW_READ s (beside an MPS fault on an H200
 * gpupack's own reading waited 60 s in the driver).
 */
#define TRACE_SLOW_READ 0.25
void trace_read(const char *who, int gpu, double t0);

#endif
