// A shared library without ompt_start_tool.
int gompt_test_not_a_tool(void) { return 7; }
