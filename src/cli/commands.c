/* commands.c - the list of `cuco` commands: name, entry point, summary and flag table. */
#include "cli/commands.h"

const struct cuco_command cuco_commands[] = {
    {"doctor", cmd_doctor, "GPUs, NVLink topology, NCCL and device-API support, nvcc",
     &cmd_doctor_spec},
    {"workloads", cmd_workloads, "list workload packages and their shapes", &cmd_workloads_spec},
    {"fastpath", cmd_fastpath, "turn a host program into a device-initiated seed",
     &cmd_fastpath_spec},
    {"eval", cmd_eval, "evaluate one program through the cascade", &cmd_eval_spec},
    {"bench", cmd_bench, "time baseline, peers, seed or any program at every shape",
     &cmd_bench_spec},
    {"show", cmd_show, "show a stored run, program or evaluation", &cmd_show_spec},
    {"realize", cmd_realize, "render the program a directive names, through the workload template",
     &cmd_realize_spec},
    {"evolve", cmd_evolve, "evolutionary search for the fastest correct program", &cmd_evolve_spec},
    {"recheck", cmd_recheck, "re-verify an evolve run's best at every shape, under the sanitizer",
     &cmd_recheck_spec},
    {"report", cmd_report, "HTML and Markdown report of an evolve run", &cmd_report_spec},
    {"init", cmd_init, "a new workload package, from nothing or from an MPI + NCCL program",
     &cmd_init_spec},
    {"export", cmd_export, "a stored program as a library for your own NCCL program",
     &cmd_export_spec},
    {"cache", cmd_cache, "show the compile cache, or clean it (all, or entries older than N days)",
     &cmd_cache_spec},
};
const size_t cuco_ncommands = sizeof(cuco_commands) / sizeof(cuco_commands[0]);
