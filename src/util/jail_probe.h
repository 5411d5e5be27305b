/*
 * jail_probe.h - whether this kernel and node let cuco build the view a
 * model's code runs in (jail.h), and if not, why.
 */
#ifndef CUCO_JAIL_PROBE_H
#define CUCO_JAIL_PROBE_H

/*
 * 1 when this kernel and node let cuco build the view (found once by
 * building it in a child, in a private directory of its own), else 0.
 */
int cuco_jail_available(void);
/* Why the view cannot be built here: the step that failed and the kernel's word; "" if it can. */
const char *cuco_jail_why(void);

#endif
