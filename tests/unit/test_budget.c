/* test_budget.c - the memory budget of serve's clients (budget.h). */
#include <criterion/criterion.h>
#include <string.h>

#include "leakcheck.h"
#include "serve/budget.h"

Test(budget, charges_the_total_and_each_address_share)
{
	struct ee_budget b;

	ee_budget_init(&b, 1000, 250);
	struct ee_budget_share *a1 = ee_budget_join(&b, "10.0.0.1"), *a2 = ee_budget_join(&b, "10.0.0.1");
	struct ee_budget_share *other = ee_budget_join(&b, "10.0.0.2");
	cr_assert(a1 && a2 && other);
	cr_expect_eq(a1, a2, "two connections from one address hold one share");
	cr_expect_eq(a1->conns, 2);
	cr_expect_eq(ee_budget_charge(&b, a1, 200), EE_BUDGET_OK);
	cr_expect_eq(ee_budget_charge(&b, a2, 51), EE_BUDGET_SHARE, "the address's quarter is used up");
	cr_expect_eq(ee_budget_charge(&b, a2, 50), EE_BUDGET_OK);
	cr_expect_eq(ee_budget_charge(&b, other, 250), EE_BUDGET_OK, "another address is still served");
	cr_expect_eq(b.held, 500);
	/* Records go to the total only; the total still binds. */
	cr_expect_eq(ee_budget_charge(&b, NULL, 500), EE_BUDGET_OK);
	cr_expect_eq(ee_budget_charge(&b, NULL, 1), EE_BUDGET_TOTAL);
	cr_expect_eq(ee_budget_charge(&b, ee_budget_join(&b, "10.0.0.3"), 1), EE_BUDGET_TOTAL);
	ee_budget_release(&b, NULL, 500);
	ee_budget_release(&b, a1, 250);
	cr_expect_eq(a1->held, 0);
	cr_expect_eq(b.held, 250);
	ee_budget_release(&b, a1, 10); /* never below zero */
	cr_expect_eq(a1->held, 0);
	ee_budget_leave(&b, a1);
	ee_budget_leave(&b, a2);
	ee_budget_leave(&b, NULL);
	/* The last connection of an address frees its share: the table holds
	 * no more entries than connections. */
	size_t n = 0;
	for (struct ee_budget_share *s = b.shares; s; s = s->next)
		n++;
	cr_expect_eq(n, 2, "10.0.0.2 and 10.0.0.3 remain");
	ee_budget_free(&b);
	/* A share larger than the total is the total. */
	ee_budget_init(&b, 100, 1000);
	cr_expect_eq(b.share, 100);
	ee_budget_free(&b);
	no_leaks();
}
