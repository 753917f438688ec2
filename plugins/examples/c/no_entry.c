/* A plain shared library with no floe entry point. */
int floe_not_a_plugin(int a, int b);

int floe_not_a_plugin(int a, int b) {
    return a + b;
}
