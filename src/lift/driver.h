/*
 * driver.h - the lift of a function rather than a program: `cuco init --entry
 * FUNC` on code with no main (a collective's plug-in, a layer's forward). The
 * lift writes a main (the driver) that makes FUNC's arguments, its buffers
 * sized from the collectives FUNC runs, and calls FUNC as the step.
 */
#ifndef CUCO_LIFT_DRIVER_H
#define CUCO_LIFT_DRIVER_H

#include <stddef.h>

#include "lift/facts.h"
#include "lift/plan.h"
#include "util/error.h"
#include "util/strbuf.h"

/* A value given for a parameter: --arg NAME=EXPR (a C expression; for a pointer, its bytes). */
struct cuco_lift_arg_value {
	const char *name;
	const char *expr;
};

/*
 * The driver's text for function fn (appended to out): each parameter made from args, else from
 * a shape parameter of its name, else by the rules of docs/your-own-program.md; FUNC called once
 * between the step's markers. CUCO_ERR_INVALID (a parameter cuco cannot make, its message
 * naming it and --arg) otherwise CUCO_OK. Notes for what it chose go to p.
 */
int cuco_lift_driver(const struct cuco_lift_facts *f, struct cuco_lift_plan *p, int fn,
                     const struct cuco_lift_arg_value *args, size_t nargs, struct cuco_strbuf *out,
                     struct cuco_err *err);

#endif
