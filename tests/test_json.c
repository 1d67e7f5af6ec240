#include "check.h"
int main(void) { return check_report("test_json"); }
