/* choice.c - looking a name up in an enum's table (see choice.h). */
#include "base/choice.h"

#include <string.h>

int ee_choice_find(const struct ee_option_choice *choices, size_t n, const char *name, int *ret)
{
	for (size_t i = 0; name && i < n; i++)
		if (strcmp(name, choices[i].name) == 0) {
			*ret = choices[i].value;
			return 0;
		}
	return -1;
}
