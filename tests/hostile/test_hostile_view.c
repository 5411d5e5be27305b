/*
 * test_hostile_view.c - a candidate's host code (a stand-in harness with
 * exactly its rights) goes after the node from the view it runs in: the
 * store (in the state directory, beside the workload, and given with
 * --store outside both), $HOME, cached objects (remounting the file systems
 * read-write first, the attack that worked as root), /proc (a sysctl
 * written back with its own value, cuco's own environ and memory), the
 * node's unix sockets (a daemon's listening in /tmp and beside the
 * workload, with and without the network namespace), its capabilities and
 * ids. Each must fail (what a path in the view's own /tmp takes never reaches
 * the node's file); run as root (CI, the GPU nodes) and as nobody.
 */
#define _GNU_SOURCE
#include <setjmp.h>
#include <stdarg.h>
#include <stddef.h>

#include <cmocka.h>

#include <fcntl.h>
#include <sys/socket.h>
#include <sys/un.h>

#include "assert_text.h"
#include "hostile.h"
#include "util/jail.h"
#include "util/jail_probe.h"

static char store_in_state[200], store_beside[200], store_away[200], away[64], object[200];
static char home_file[200];

static int setup(void **state)
{
	char p[200];

	(void)state;
	if (hostile_setup("view") || chmod(hostile_dir, 0755))
		return -1;
	snprintf(store_in_state, sizeof(store_in_state), "%s/cuco.db", getenv("CUCO_STATE"));
	hostile_path("runs.db", store_beside, sizeof(store_beside));
	snprintf(away, sizeof(away), "/tmp/cuco-hostile-away-XXXXXX");
	if (!mkdtemp(away))
		return -1;
	snprintf(store_away, sizeof(store_away), "%s/other.db", away);
	snprintf(p, sizeof(p), "%s/cache", getenv("CUCO_STATE"));
	snprintf(object, sizeof(object), "%s/baseline.so", p);
	snprintf(home_file, sizeof(home_file), "%s/.cuco-hostile-%d",
	         getenv("HOME") ? getenv("HOME") : "/root", (int)getpid());
	if (cuco_mkdir_p(p) || cuco_write_file(store_in_state, "STORE", 5) ||
	    cuco_write_file(store_beside, "STORE", 5) || cuco_write_file(store_away, "STORE", 5) ||
	    cuco_write_file(object, "TRUSTED", 7) || chmod(object, 0444))
		return -1;
	return 0;
}

static int teardown(void **state)
{
	(void)state;
	unlink(home_file);
	cuco_proc_remove_tree(away);
	hostile_teardown();
	return 0;
}

static void assert_file(const char *path, const char *want)
{
	struct cuco_strbuf sb = CUCO_STRBUF_INIT;

	assert_int_equal(cuco_strbuf_read_file(&sb, path), 0);
	if (strcmp(sb.buf, want))
		fail_msg("%s was changed: %s", path, sb.buf);
	cuco_strbuf_release(&sb);
}

/* Run script in the view; its log into seen. */
static void attack(const char *script, struct cuco_strbuf *seen)
{
	struct cuco_run_result res;
	struct cuco_err err;
	char full[8192];

	snprintf(
	    full, sizeof(full),
	    "try() { if ( eval \"$2\" ) >/dev/null 2>&1; then echo \"$1 DONE\"; else echo \"$1 "
	    "refused\"; fi; }\n%s\necho '" HOSTILE_HONEST(0, 1) "' >&3",
	    script);
	(void)hostile_run(full, NULL, &res, &err);
	cuco_strbuf_reset(seen);
	cuco_strbuf_adds(seen, res.log.buf);
	if (getenv("CUCO_HOSTILE_VERBOSE"))
		print_message("%s", seen->buf);
	cuco_run_result_release(&res);
}

static void skip_without_view(void)
{
	if (!cuco_run_jailed()) {
		print_message("no view here: %s\n", cuco_jail_why());
		skip();
	}
}

/* The store wherever it is, $HOME, a cached object after remounting read-write. */
static void test_files(void **state)
{
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char script[4096];

	(void)state;
	skip_without_view();
	snprintf(script, sizeof(script),
	         "for s in %s %s %s; do try \"store $s\" \"echo FORGED > $s\"; done\n"
	         "try home \"echo FORGED > %s\"\n"
	         "try remount-root 'mount -o remount,rw /'\n"
	         "try remount-usr 'mount -o remount,rw,bind /usr'\n"
	         "try remount-object \"mount -o remount,rw,bind %s\"\n"
	         "try object \"chmod 644 %s; echo FORGED > %s\"\n"
	         "try umount-object \"umount -l %s\"\n"
	         "try new-mount 'mount -t tmpfs none /mnt'\n"
	         "try unshare 'unshare -rm sh -c \"mount -o remount,rw /usr\"'\n",
	         store_in_state, store_beside, store_away, home_file, object, object, object,
	         object);
	attack(script, &seen);
	/* a store or $HOME path "written" lands, at most, in a folder of the view's own /tmp:
	 * what counts is the node's file, below */
	for (const char *w = "remount-root\0remount-usr\0remount-object\0object\0umount-object\0"
	                     "new-mount\0unshare\0";
	     *w; w += strlen(w) + 1) {
		char want[64];
		snprintf(want, sizeof(want), "%s refused\n", w);
		assert_contains(seen.buf, want);
	}
	assert_file(store_in_state, "STORE");
	assert_file(store_beside, "STORE");
	assert_file(store_away, "STORE");
	assert_file(object, "TRUSTED");
	assert_false(cuco_file_exists(home_file));
	cuco_strbuf_release(&seen);
}

/* /proc: a sysctl written back with its value (as root it would take), cuco's process. */
static void test_proc(void **state)
{
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char script[2048];

	(void)state;
	skip_without_view();
	snprintf(script, sizeof(script),
	         "try sysctl 'cat /proc/sys/kernel/domainname > /proc/sys/kernel/domainname'\n"
	         "try sysrq 'echo h > /proc/sysrq-trigger'\n"
	         "try cuco-environ 'cat /proc/%d/environ'\n"
	         "try cuco-mem 'echo x > /proc/%d/mem'\n"
	         "echo \"processes: $(ls -d /proc/[0-9]* | wc -l)\"\n"
	         "echo \"uid: $(id -u)\"\n"
	         "grep -E '^(CapEff|CapPrm|CapBnd|NoNewPrivs):' /proc/self/status\n",
	         (int)getpid(), (int)getpid());
	attack(script, &seen);
	if (strstr(seen.buf, " DONE"))
		fail_msg("an attack worked:\n%s", seen.buf);
	assert_contains(seen.buf, "CapEff:\t0000000000000000");
	assert_contains(seen.buf, "CapPrm:\t0000000000000000");
	assert_contains(seen.buf, "NoNewPrivs:\t1");
	{
		const char *p = strstr(seen.buf, "processes: ");
		assert_non_null(p);
		assert_true(strtol(p + 11, NULL, 10) < 10); /* its own PID namespace */
	}
	if (geteuid() == 0)
		assert_null(strstr(seen.buf, "uid: 0\n")); /* as root: an unprivileged id */
	cuco_strbuf_release(&seen);
}

/* A listening unix socket at path; its descriptor (non-blocking). */
static int listen_at(const char *path)
{
	struct sockaddr_un sa;
	int fd = socket(AF_UNIX, SOCK_STREAM | SOCK_NONBLOCK | SOCK_CLOEXEC, 0);

	assert_true(fd >= 0);
	memset(&sa, 0, sizeof(sa));
	sa.sun_family = AF_UNIX;
	snprintf(sa.sun_path, sizeof(sa.sun_path), "%s", path);
	unlink(path);
	assert_int_equal(bind(fd, (struct sockaddr *)&sa, sizeof(sa)), 0);
	assert_int_equal(chmod(path, 0777), 0);
	assert_int_equal(listen(fd, 4), 0);
	return fd;
}

/* The node's unix sockets, with and without the run's network namespace. */
static void test_unix_sockets(void **state)
{
	struct cuco_strbuf seen = CUCO_STRBUF_INIT;
	char tmp_sock[108], beside_sock[108], script[2048];
	int a, b;

	(void)state;
	skip_without_view();
	if (access("/usr/bin/python3", X_OK)) {
		print_message("no /usr/bin/python3 to connect with: skipped\n");
		skip();
	}
	snprintf(tmp_sock, sizeof(tmp_sock), "/tmp/cuco-hostile-%d.sock", (int)getpid());
	hostile_path("daemon.sock", beside_sock, sizeof(beside_sock));
	a = listen_at(tmp_sock);
	b = listen_at(beside_sock);
	snprintf(script, sizeof(script),
	         "for s in %s %s; do try \"connect $s\" \"/usr/bin/python3 -c 'import socket,sys; "
	         "socket.socket(socket.AF_UNIX).connect(sys.argv[1])' $s\"; done",
	         tmp_sock, beside_sock);
	for (int netns = 0; netns < 2; netns++) {
		if (netns)
			setenv("CUCO_SANDBOX_RUN_NETNS", "1", 1);
		attack(script, &seen);
		unsetenv("CUCO_SANDBOX_RUN_NETNS");
		assert_contains(seen.buf, "connect");
		if (strstr(seen.buf, " DONE") || accept(a, NULL, NULL) >= 0 ||
		    accept(b, NULL, NULL) >= 0)
			fail_msg("a unix socket of the node was reached (netns %d):\n%s", netns,
			         seen.buf);
	}
	close(a);
	close(b);
	unlink(tmp_sock);
	unlink(beside_sock);
	cuco_strbuf_release(&seen);
}

int main(void)
{
	const struct CMUnitTest tests[] = {
	    cmocka_unit_test(test_files),
	    cmocka_unit_test(test_proc),
	    cmocka_unit_test(test_unix_sockets),
	};
	return cmocka_run_group_tests(tests, setup, teardown);
}
