/* main.c - cuco-harness entry point (bring-up). */
int main(void) { return 0; }
