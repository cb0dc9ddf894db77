/* formula.h - the one formula language: a small arithmetic formula over
 * named variables, parsed into a fixed array of nodes and evaluated
 * against values its caller supplies. --composite (results/composite.h:
 * the summary's metrics) and --reward (verdict/reward.h: one record's
 * facts) each name their own variables; the grammar is the same:
 *   expr    := sum (('<' | '<=' | '>' | '>=' | '==' | '!=') sum)?
 *   sum     := term (('+' | '-') term)*
 *   term    := unary (('*' | '/') unary)*
 *   unary   := '-' unary | primary
 *   primary := NUMBER | VAR | FUNC '(' expr (',' expr)* ')' | '(' expr ')'
 *   FUNC    := min(a, b) | max(a, b) | if(cond, then, else)
 * VAR is [a-z_][a-z0-9_]* with an optional "@K" (K a whole number, the
 * caller's to check: pass@10). A comparison is 1 or 0; if() takes then
 * when cond is not 0. Bounded: 256 bytes of text, 64 nodes, nesting 16
 * deep. Evaluation is eager (every node, in order): a variable the caller
 * lacks is an error even in the branch if() does not take.
 *
 * Ownership: a parsed formula is a fixed-size value; nothing to free.
 */
#ifndef EE_FORMULA_H
#define EE_FORMULA_H

#include <stddef.h>

struct ee_err;

#define EE_FORMULA_MAX_TEXT  256
#define EE_FORMULA_MAX_NODES 64
#define EE_FORMULA_MAX_DEPTH 16

enum ee_fnode_kind {
	EE_FN_NUM,
	EE_FN_VAR,
	EE_FN_NEG,
	EE_FN_ADD,
	EE_FN_SUB,
	EE_FN_MUL,
	EE_FN_DIV,
	EE_FN_LT,
	EE_FN_LE,
	EE_FN_GT,
	EE_FN_GE,
	EE_FN_EQ,
	EE_FN_NE,
	EE_FN_MIN,
	EE_FN_MAX,
	EE_FN_IF
};

struct ee_fnode {
	int kind;    /* enum ee_fnode_kind */
	double num;  /* EE_FN_NUM */
	int var;     /* EE_FN_VAR: the caller's variable number */
	unsigned k;  /* EE_FN_VAR: its @K, 0 when none */
	int a, b, c; /* operand indices (b for binary nodes, c for if's else) */
};

struct ee_formula {
	char text[EE_FORMULA_MAX_TEXT + 1]; /* as given, whitespace removed */
	struct ee_fnode nodes[EE_FORMULA_MAX_NODES];
	int n_nodes, root;
};

/* A caller's variables: names[i] is variable i; a name ending in '@'
 * takes a K in [1, 100000] (pass@). list names them all for an error. */
struct ee_formula_vars {
	const char *const *names;
	int n;
	const char *noun; /* "metric", "fact": what a variable is called in errors */
	const char *list;
};

/* Errors name the option and the position ("--reward: at 7: expected a
 * variable, a number or '('"); option is the name without "--". */
int ee_formula_parse(const char *option, const char *text, const struct ee_formula_vars *vars,
                     struct ee_formula *ret, struct ee_err *err);

/* A variable's value, NAN when the caller has none. */
typedef double (*ee_formula_value_fn)(void *ctx, int var, unsigned k);

/* The formula's value. Returns 0; or -1 with *missing set to the index of
 * the first node whose variable was NAN (then *ret is untouched); or -2
 * when the value is not finite (a division by zero). */
int ee_formula_eval(const struct ee_formula *f, ee_formula_value_fn value, void *ctx, double *ret,
                    int *missing);

#endif
