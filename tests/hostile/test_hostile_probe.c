/*
 * test_hostile_probe.c - the sandbox fails closed. A candidate (or anyone on
 * the node) creates the name cuco's probe of the view once used in /tmp, so
 * that every later cuco finds no view and runs the next candidates without
 * it: the probe works in a private directory and still finds the view. Where
 * the view truly cannot be made (here: a user namespace whose limits allow
 * no namespace), a model's code is refused unless --unsandboxed is given,
 * and `cuco doctor` names the step that failed and the kernel's reason.
 */
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <errno.h>
#include <sys/wait.h>

#include "assert_text.h"
#include "cascade/sandbox.h"
#include "hostile.h"
#include "util/jail.h"
#include "util/jail_probe.h"

#define SQUAT "/tmp/cuco-jail-probe-outside"
#define CUCO CUCO_BINARY_DIR "/cuco"

static int setup(void **state)
{
	(void)state;
	return hostile_setup("probe");
}

static int teardown(void **state)
{
	(void)state;
	hostile_teardown();
	return 0;
}

/* What a fresh process finds: cuco_jail_available in a child. */
static int available_in_child(void)
{
	int status = 0;
	pid_t pid = fork();

	if (pid == 0)
		_exit(cuco_jail_available() ? 0 : 1);
	return pid > 0 && waitpid(pid, &status, 0) == pid && WIFEXITED(status) &&
	       WEXITSTATUS(status) == 0;
}

static void test_probe_name_squatted(void **state)
{
	int made = 0;

	(void)state;
	if (!available_in_child()) {
		print_message("no view on this kernel (%s): skipped\n", cuco_jail_why());
		skip();
	}
	/* the squat: the old fixed name, as a directory and as a link to one */
	if (mkdir(SQUAT, 0777) == 0)
		made = 1;
	else if (errno != EEXIST)
		fail_msg("cannot make %s: %s", SQUAT, strerror(errno));
	assert_true(cuco_jail_available());
	assert_string_equal(cuco_jail_why(), "");
	if (made)
		rmdir(SQUAT);
}

/* sh -c script, its output into out; the exit code. */
static int sh(const char *script, struct cuco_strbuf *out)
{
	char *argv[] = {"sh", "-c", (char *)script, NULL};
	struct cuco_proc_status st;

	cuco_strbuf_reset(out);
	assert_int_equal(cuco_proc_run(argv, NULL, out, out, 120, &st), 0);
	return st.exited ? st.code : 128 + st.code;
}

static void test_fails_closed(void **state)
{
	struct cuco_strbuf out = CUCO_STRBUF_INIT;
	char why[640], script[1024];
	static const char llm[] = " fastpath no_such_workload --llm --llm-base-url "
	                          "http://127.0.0.1:9 --llm-model m --no-compile";

	(void)state;
	/* turned off: refused without the flag, run with it */
	setenv("CUCO_SANDBOX_RUN_JAIL", "0", 1);
	assert_int_equal(cuco_sandbox_ready(0, why, sizeof(why)), 0);
	assert_contains(why, "CUCO_SANDBOX_RUN_JAIL=0");
	unsetenv("CUCO_SANDBOX_RUN_JAIL");
	assert_int_equal(cuco_sandbox_ready(1, why, sizeof(why)), 0); /* a farm's nodes */
	assert_contains(why, "farm");
	snprintf(script, sizeof(script), "CUCO_SANDBOX_RUN_JAIL=0 %s%s", CUCO, llm);
	assert_int_equal(sh(script, &out), CUCO_ERR_UNSUPPORTED);
	assert_contains(out.buf, "the model's code runs only in the sandbox's view");

	/* a node where no namespace can be made: a user namespace whose limits allow none */
	if (sh("unshare -U -r true", &out)) {
		print_message("no user namespaces here (%s): the node case skipped\n", out.buf);
		cuco_strbuf_release(&out);
		return;
	}
	snprintf(script, sizeof(script),
	         "unshare -U -r sh -c 'echo 0 > /proc/sys/user/max_mnt_namespaces && "
	         "echo 0 > /proc/sys/user/max_user_namespaces && exec %s doctor'",
	         CUCO);
	sh(script, &out);
	assert_contains(out.buf, "the view cannot be made here");
	/* the first step that failed there, and the kernel's word: no namespace left, or (root
	 * there) no unprivileged id mapped to become */
	assert_contains(out.buf, "why: ");
	if (!strstr(out.buf, "No space left on device") && !strstr(out.buf, "Invalid argument"))
		fail_msg("doctor gave no true reason:\n%s", out.buf);
	assert_contains(out.buf, "refused (cuco fails closed) unless --unsandboxed");
	snprintf(script, sizeof(script),
	         "unshare -U -r sh -c 'echo 0 > /proc/sys/user/max_mnt_namespaces && exec %s%s'",
	         CUCO, llm);
	assert_int_equal(sh(script, &out), CUCO_ERR_UNSUPPORTED);
	assert_contains(out.buf, "this node cannot make the view: ");
	snprintf(script, sizeof(script),
	         "unshare -U -r sh -c 'echo 0 > /proc/sys/user/max_mnt_namespaces && exec %s%s "
	         "--unsandboxed'",
	         CUCO, llm);
	assert_int_not_equal(sh(script, &out), CUCO_ERR_UNSUPPORTED);
	assert_contains(out.buf, "runs outside the sandbox's view");
	assert_contains(out.buf, "no_such_workload"); /* went on, to the workload */
	cuco_strbuf_release(&out);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_probe_name_squatted),
	    cmocka_unit_test(test_fails_closed),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
