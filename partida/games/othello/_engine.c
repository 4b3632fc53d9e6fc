/* The fast Othello engine: bitboard move generation, a midgame alpha-beta search (principal
 * variation search with iterative deepening, a transposition table keyed by a Zobrist hash,
 * move ordering by table move, killers, history and opponent mobility) and an exact endgame
 * solver. Python calls it through a handful of functions (see the method table at the end);
 * partida/games/othello/engine.py is the readable wrapper.
 *
 * Board layout: bit i is square i, a1 = bit 0, h1 = bit 7, h8 = bit 63 (the OBF order).
 * A position is (P, O): the discs of the side to move and of its opponent.
 * Midgame values are in hundredths of a disc; exact endgame values are disc differences with
 * the empty squares given to the winner.
 */
#define PY_SSIZE_T_CLEAN
#include <Python.h>
#include <stdint.h>
#include <string.h>
#include <stdlib.h>
#include <time.h>
#include <pthread.h>

typedef uint64_t u64;

#define NOT_A 0xFEFEFEFEFEFEFEFEULL
#define NOT_H 0x7F7F7F7F7F7F7F7FULL
#define CORNERS 0x8100000000000081ULL
#define NO_MOVE 64
#define PASS_MOVE 65
#define INF_SCORE 30000
#define DISC 100

static inline int popcount(u64 x) { return __builtin_popcountll(x); }
static inline int lsb(u64 x) { return __builtin_ctzll(x); }

/* ---- move generation ------------------------------------------------------------------ */

static inline u64 shift_dir(u64 x, int d) {
    switch (d) {
    case 0: return (x << 1) & NOT_A;  /* east */
    case 1: return (x >> 1) & NOT_H;  /* west */
    case 2: return x << 8;            /* south (next rank) */
    case 3: return x >> 8;            /* north */
    case 4: return (x << 9) & NOT_A;
    case 5: return (x << 7) & NOT_H;
    case 6: return (x >> 7) & NOT_A;
    default: return (x >> 9) & NOT_H;
    }
}

static u64 get_moves(u64 P, u64 O) {
    u64 moves = 0, empty = ~(P | O), t, m;
    /* horizontal */
    m = O & 0x7E7E7E7E7E7E7E7EULL;
    t = m & (P << 1); t |= m & (t << 1); t |= m & (t << 1); t |= m & (t << 1); t |= m & (t << 1); t |= m & (t << 1);
    moves |= t << 1;
    t = m & (P >> 1); t |= m & (t >> 1); t |= m & (t >> 1); t |= m & (t >> 1); t |= m & (t >> 1); t |= m & (t >> 1);
    moves |= t >> 1;
    /* vertical */
    m = O & 0x00FFFFFFFFFFFF00ULL;
    t = m & (P << 8); t |= m & (t << 8); t |= m & (t << 8); t |= m & (t << 8); t |= m & (t << 8); t |= m & (t << 8);
    moves |= t << 8;
    t = m & (P >> 8); t |= m & (t >> 8); t |= m & (t >> 8); t |= m & (t >> 8); t |= m & (t >> 8); t |= m & (t >> 8);
    moves |= t >> 8;
    /* diagonals */
    m = O & 0x007E7E7E7E7E7E00ULL;
    t = m & (P << 7); t |= m & (t << 7); t |= m & (t << 7); t |= m & (t << 7); t |= m & (t << 7); t |= m & (t << 7);
    moves |= t << 7;
    t = m & (P >> 7); t |= m & (t >> 7); t |= m & (t >> 7); t |= m & (t >> 7); t |= m & (t >> 7); t |= m & (t >> 7);
    moves |= t >> 7;
    t = m & (P << 9); t |= m & (t << 9); t |= m & (t << 9); t |= m & (t << 9); t |= m & (t << 9); t |= m & (t << 9);
    moves |= t << 9;
    t = m & (P >> 9); t |= m & (t >> 9); t |= m & (t >> 9); t |= m & (t >> 9); t |= m & (t >> 9); t |= m & (t >> 9);
    moves |= t >> 9;
    return moves & empty;
}

static u64 get_flips(u64 P, u64 O, int sq) {
    u64 m = 1ULL << sq, flips = 0;
    if ((P | O) & m) return 0;
    for (int d = 0; d < 8; d++) {
        u64 f = 0, x = shift_dir(m, d);
        while (x & O) { f |= x; x = shift_dir(x, d); }
        if (x & P) flips |= f;
    }
    return flips;
}

/* ---- hashing ---------------------------------------------------------------------------- */

static u64 zobrist[16][256];
static int zobrist_ready = 0;

static u64 splitmix(u64 *s) {
    u64 z = (*s += 0x9E3779B97F4A7C15ULL);
    z = (z ^ (z >> 30)) * 0xBF58476D1CE4E5B9ULL;
    z = (z ^ (z >> 27)) * 0x94D049BB133111EBULL;
    return z ^ (z >> 31);
}

static void init_zobrist(void) {
    u64 s = 20240601;
    for (int i = 0; i < 16; i++)
        for (int j = 0; j < 256; j++) zobrist[i][j] = splitmix(&s);
    zobrist_ready = 1;
}

/* Zobrist hashing by bytes: one random key per (byte position, byte value) of P then O. */
static inline u64 hash_position(u64 P, u64 O) {
    u64 h = 0;
    for (int i = 0; i < 8; i++) {
        h ^= zobrist[i][(P >> (8 * i)) & 0xFF];
        h ^= zobrist[8 + i][(O >> (8 * i)) & 0xFF];
    }
    return h;
}

/* ---- transposition tables --------------------------------------------------------------- */

typedef struct {
    u64 key;
    int16_t lower, upper;
    int8_t depth;
    uint8_t move;
    uint8_t pad[2];
} TTEntry;

#define MID_BITS 20
#define END_BITS 21
static TTEntry *mid_tt = NULL, *end_tt = NULL;
static pthread_mutex_t engine_lock = PTHREAD_MUTEX_INITIALIZER;

static int ensure_tables(void) {
    if (!zobrist_ready) init_zobrist();
    if (!mid_tt) mid_tt = calloc((size_t)1 << MID_BITS, sizeof(TTEntry));
    if (!end_tt) end_tt = calloc((size_t)1 << END_BITS, sizeof(TTEntry));
    return mid_tt != NULL && end_tt != NULL;
}

static void clear_tables(void) {
    memset(mid_tt, 0, ((size_t)1 << MID_BITS) * sizeof(TTEntry));
    memset(end_tt, 0, ((size_t)1 << END_BITS) * sizeof(TTEntry));
}

static inline TTEntry *tt_probe(TTEntry *table, int bits, u64 key) {
    TTEntry *e = &table[key & (((u64)1 << bits) - 1)];
    return e->key == key ? e : NULL;
}

static inline void tt_store(TTEntry *table, int bits, u64 key, int depth, int alpha, int beta, int score, int move) {
    TTEntry *e = &table[key & (((u64)1 << bits) - 1)];
    if (e->key != key && e->depth > depth + 2) return; /* keep deeper results of other positions */
    if (e->key != key || e->depth != depth) {
        e->key = key; e->depth = (int8_t)depth;
        e->lower = -INF_SCORE; e->upper = INF_SCORE;
    }
    if (score > alpha) e->lower = (int16_t)score;
    if (score < beta) e->upper = (int16_t)score;
    if (score > alpha || e->move == NO_MOVE || e->move == 0) e->move = (uint8_t)move;
}

/* ---- search state --------------------------------------------------------------------- */

static u64 nodes;
static int aborted;
static double deadline;

static double now(void) {
    struct timespec ts;
    clock_gettime(CLOCK_MONOTONIC, &ts);
    return ts.tv_sec + ts.tv_nsec * 1e-9;
}

static inline int check_time(void) {
    if ((nodes & 4095) == 0 && deadline > 0 && now() > deadline) aborted = 1;
    return aborted;
}

/* ---- evaluation ----------------------------------------------------------------------- */

/* Square weights (hundredths of a disc), symmetric; X and C squares lose their penalty once
 * the corner next to them is taken (see evaluate). */
static const int SQUARE_WEIGHT[64] = {
    120, -25,  15,   8,   8,  15, -25, 120,
    -25, -45,  -4,  -2,  -2,  -4, -45, -25,
     15,  -4,   3,   1,   1,   3,  -4,  15,
      8,  -2,   1,   0,   0,   1,  -2,   8,
      8,  -2,   1,   0,   0,   1,  -2,   8,
     15,  -4,   3,   1,   1,   3,  -4,  15,
    -25, -45,  -4,  -2,  -2,  -4, -45, -25,
    120, -25,  15,   8,   8,  15, -25, 120,
};
/* For each corner: the corner, its X square and its two C squares. */
static const int CORNER_GROUP[4][4] = {{0, 9, 1, 8}, {7, 14, 6, 15}, {56, 49, 57, 48}, {63, 54, 62, 55}};

#define W_MOBILITY 9      /* per move of difference in mobility */
#define W_POTENTIAL 3     /* per empty square next to the opponent's discs (frontier) */
#define W_CORNER 60       /* per corner, on top of the square weight */
#define W_STABLE 20       /* per stable edge disc grown from a corner */
#define W_PARITY 30       /* the last move in the region: side to move with an odd number of empties */

static inline u64 neighbours(u64 x) {
    return ((x << 1) & NOT_A) | ((x >> 1) & NOT_H) | (x << 8) | (x >> 8) | ((x << 9) & NOT_A) | ((x << 7) & NOT_H) |
           ((x >> 7) & NOT_A) | ((x >> 9) & NOT_H);
}

/* Discs on the edges that run unbroken from an owned corner: they can never be flipped. */
static u64 edge_stable(u64 B) {
    u64 stable = 0;
    static const int starts[4] = {0, 7, 56, 63};
    static const int steps[4][2] = {{1, 8}, {-1, 8}, {1, -8}, {-1, -8}};
    for (int c = 0; c < 4; c++) {
        int sq = starts[c];
        if (!((B >> sq) & 1)) continue;
        for (int k = 0; k < 2; k++) {
            int s = sq;
            for (int i = 0; i < 8; i++) {
                if (!((B >> s) & 1)) break;
                stable |= 1ULL << s;
                s += steps[c][k];
            }
        }
    }
    return stable;
}

static int evaluate(u64 P, u64 O) {
    u64 empty = ~(P | O);
    int score = 0;
    int n_empty = popcount(empty);
    for (u64 b = P; b; b &= b - 1) score += SQUARE_WEIGHT[lsb(b)];
    for (u64 b = O; b; b &= b - 1) score -= SQUARE_WEIGHT[lsb(b)];
    for (int c = 0; c < 4; c++) {
        u64 corner = 1ULL << CORNER_GROUP[c][0];
        if ((P | O) & corner) { /* the X and C penalties no longer apply */
            for (int k = 1; k < 4; k++) {
                u64 sq = 1ULL << CORNER_GROUP[c][k];
                if (P & sq) score -= SQUARE_WEIGHT[CORNER_GROUP[c][k]];
                if (O & sq) score += SQUARE_WEIGHT[CORNER_GROUP[c][k]];
            }
        }
    }
    score += W_CORNER * (popcount(P & CORNERS) - popcount(O & CORNERS));
    int mp = popcount(get_moves(P, O)), mo = popcount(get_moves(O, P));
    int mobility_weight = W_MOBILITY + (n_empty > 40 ? 3 : 0);
    score += mobility_weight * (mp - mo);
    score += W_POTENTIAL * (popcount(neighbours(O) & empty) - popcount(neighbours(P) & empty));
    score += W_STABLE * (popcount(edge_stable(P)) - popcount(edge_stable(O)));
    if (n_empty < 20) score += (n_empty & 1) ? W_PARITY / 3 : -W_PARITY / 3;
    /* the disc count itself only matters near the end, and then only a little */
    if (n_empty < 20) score += (20 - n_empty) * (popcount(P) - popcount(O)) / 2;
    if (score > 60 * DISC) score = 60 * DISC;
    if (score < -60 * DISC) score = -60 * DISC;
    return score;
}

static int final_score(u64 P, u64 O) {
    int p = popcount(P), o = popcount(O), e = 64 - p - o, d = p - o;
    if (d > 0) d += e;
    else if (d < 0) d -= e;
    return d;
}

/* ---- exact endgame solver ------------------------------------------------------------- */

static const u64 QUADRANT[4] = {0x000000000F0F0F0FULL, 0x00000000F0F0F0F0ULL, 0x0F0F0F0F00000000ULL,
                                0xF0F0F0F000000000ULL};

static int solve_last1(u64 P, u64 O, int sq) {
    nodes++;
    int p = popcount(P), o = popcount(O);
    u64 f = get_flips(P, O, sq);
    if (f) { int n = popcount(f); return p - o + 2 * n + 1; }
    f = get_flips(O, P, sq);
    if (f) { int n = popcount(f); return p - o - 2 * n - 1; }
    int d = p - o;
    return d > 0 ? d + 1 : d < 0 ? d - 1 : 0;
}

/* Shallow solver: no table, squares in odd quadrants first, then by weight. */
static int solve_shallow(u64 P, u64 O, int alpha, int beta, int empties, int passed) {
    u64 empty = ~(P | O);
    if (empties == 1) return solve_last1(P, O, lsb(empty));
    nodes++;
    u64 odd = 0;
    for (int q = 0; q < 4; q++)
        if (popcount(empty & QUADRANT[q]) & 1) odd |= QUADRANT[q];
    int best = -INF_SCORE, any = 0;
    u64 lists[2] = {empty & odd, empty & ~odd};
    for (int l = 0; l < 2; l++) {
        for (u64 b = lists[l]; b; b &= b - 1) {
            int sq = lsb(b);
            u64 f = get_flips(P, O, sq);
            if (!f) continue;
            any = 1;
            u64 nP = O & ~f, nO = P | f | (1ULL << sq);
            int v = -solve_shallow(nP, nO, -beta, -alpha, empties - 1, 0);
            if (v > best) {
                best = v;
                if (v > alpha) { alpha = v; if (alpha >= beta) return best; }
            }
        }
    }
    if (!any) {
        if (passed) return final_score(P, O);
        return -solve_shallow(O, P, -beta, -alpha, empties, 1);
    }
    return best;
}

#define SHALLOW_EMPTIES 7
#define EXACT_TIMED 18   /* under a time budget, solve exactly from this many empties */
#define EXACT_UNTIMED 24 /* without one, from this many */

typedef struct { int sq; u64 flips; int key; } MoveItem;

static void sort_moves(MoveItem *m, int n) {
    for (int i = 1; i < n; i++) {
        MoveItem x = m[i]; int j = i - 1;
        while (j >= 0 && m[j].key < x.key) { m[j + 1] = m[j]; j--; }
        m[j + 1] = x;
    }
}

static int solve_deep(u64 P, u64 O, int alpha, int beta, int empties, int passed, int *best_move);

static int solve(u64 P, u64 O, int alpha, int beta, int empties, int passed) {
    if (empties <= SHALLOW_EMPTIES) return solve_shallow(P, O, alpha, beta, empties, passed);
    int mv;
    return solve_deep(P, O, alpha, beta, empties, passed, &mv);
}

/* Deeper solver: transposition table, table move first, then fastest first (fewest replies). */
static int solve_deep(u64 P, u64 O, int alpha, int beta, int empties, int passed, int *best_move) {
    nodes++;
    *best_move = NO_MOVE;
    if (check_time()) return 0;
    u64 key = hash_position(P, O);
    int tt_move = NO_MOVE;
    TTEntry *e = tt_probe(end_tt, END_BITS, key);
    if (e) {
        if (e->lower >= beta) { *best_move = e->move; return e->lower; }
        if (e->upper <= alpha) { *best_move = e->move; return e->upper; }
        if (e->lower == e->upper) { *best_move = e->move; return e->lower; }
        if (e->lower > alpha) alpha = e->lower;
        if (e->upper < beta) beta = e->upper;
        tt_move = e->move;
    }
    u64 moves = get_moves(P, O);
    if (!moves) {
        if (passed) return final_score(P, O);
        int v = -solve(O, P, -beta, -alpha, empties, 1);
        *best_move = PASS_MOVE;
        return v;
    }
    MoveItem list[32];
    int n = 0;
    for (u64 b = moves; b; b &= b - 1) {
        int sq = lsb(b);
        u64 f = get_flips(P, O, sq);
        u64 nP = O & ~f, nO = P | f | (1ULL << sq);
        u64 replies = get_moves(nP, nO);
        int key_value = -16 * popcount(replies) - 6 * popcount(replies & CORNERS);
        if ((1ULL << sq) & CORNERS) key_value += 12;
        if (sq == tt_move) key_value += 100000;
        list[n].sq = sq; list[n].flips = f; list[n].key = key_value; n++;
    }
    sort_moves(list, n);
    int orig_alpha = alpha, best = -INF_SCORE, bm = list[0].sq;
    for (int i = 0; i < n; i++) {
        int sq = list[i].sq;
        u64 f = list[i].flips;
        u64 nP = O & ~f, nO = P | f | (1ULL << sq);
        int v;
        if (i == 0) {
            v = -solve(nP, nO, -beta, -alpha, empties - 1, 0);
        } else {
            v = -solve(nP, nO, -alpha - 1, -alpha, empties - 1, 0);
            if (v > alpha && v < beta && !aborted) v = -solve(nP, nO, -beta, -alpha, empties - 1, 0);
        }
        if (aborted) return 0;
        if (v > best) {
            best = v; bm = sq;
            if (v > alpha) { alpha = v; if (alpha >= beta) break; }
        }
    }
    tt_store(end_tt, END_BITS, key, empties, orig_alpha, beta, best, bm);
    *best_move = bm;
    return best;
}

/* ---- midgame search ------------------------------------------------------------------- */

#define MAX_PLY 64
static int killers[MAX_PLY][2];
static int history[2][64];

static int midgame(u64 P, u64 O, int depth, int alpha, int beta, int ply, int passed);

static int midgame(u64 P, u64 O, int depth, int alpha, int beta, int ply, int passed) {
    int empties = 64 - popcount(P | O);
    if (depth >= empties) {
        /* the search reaches the end of the game: solve it exactly */
        int a = alpha <= -64 * DISC ? -64 : alpha / DISC - 1;
        int b = beta >= 64 * DISC ? 64 : beta / DISC + 1;
        if (a < -64) a = -64;
        if (b > 64) b = 64;
        int v = solve(P, O, a, b, empties, passed);
        return v * DISC;
    }
    nodes++;
    if (check_time()) return 0;
    if (depth <= 0) return evaluate(P, O);
    u64 key = hash_position(P, O);
    int tt_move = NO_MOVE;
    TTEntry *e = tt_probe(mid_tt, MID_BITS, key);
    if (e) {
        if (e->depth >= depth) {
            if (e->lower >= beta) return e->lower;
            if (e->upper <= alpha) return e->upper;
            if (e->lower == e->upper) return e->lower;
        }
        tt_move = e->move;
    }
    u64 moves = get_moves(P, O);
    if (!moves) {
        if (passed || !get_moves(O, P)) return final_score(P, O) * DISC;
        return -midgame(O, P, depth - 1, -beta, -alpha, ply + 1, 1);
    }
    MoveItem list[32];
    int n = 0, side = empties & 1;
    for (u64 b = moves; b; b &= b - 1) {
        int sq = lsb(b);
        u64 f = get_flips(P, O, sq);
        int key_value = history[side][sq];
        if (depth >= 3) {
            u64 nP = O & ~f, nO = P | f | (1ULL << sq);
            key_value += -400 * popcount(get_moves(nP, nO)) + 10 * SQUARE_WEIGHT[sq];
        } else {
            key_value += 20 * SQUARE_WEIGHT[sq];
        }
        if (ply < MAX_PLY && (sq == killers[ply][0] || sq == killers[ply][1])) key_value += 5000;
        if (sq == tt_move) key_value += 1 << 24;
        list[n].sq = sq; list[n].flips = f; list[n].key = key_value; n++;
    }
    sort_moves(list, n);
    int orig_alpha = alpha, best = -INF_SCORE, bm = list[0].sq;
    for (int i = 0; i < n; i++) {
        int sq = list[i].sq;
        u64 f = list[i].flips;
        u64 nP = O & ~f, nO = P | f | (1ULL << sq);
        int v;
        if (i == 0) {
            v = -midgame(nP, nO, depth - 1, -beta, -alpha, ply + 1, 0);
        } else {
            v = -midgame(nP, nO, depth - 1, -alpha - 1, -alpha, ply + 1, 0);
            if (v > alpha && v < beta && !aborted) v = -midgame(nP, nO, depth - 1, -beta, -alpha, ply + 1, 0);
        }
        if (aborted) return 0;
        if (v > best) {
            best = v; bm = sq;
            if (v > alpha) {
                alpha = v;
                if (alpha >= beta) {
                    if (ply < MAX_PLY && killers[ply][0] != sq) { killers[ply][1] = killers[ply][0]; killers[ply][0] = sq; }
                    history[side][sq] += depth * depth;
                    break;
                }
            }
        }
    }
    tt_store(mid_tt, MID_BITS, key, depth, orig_alpha, beta, best, bm);
    return best;
}

/* Root search at one depth: returns the value and sets *best_move. Moves are tried in `order`
 * (the previous iteration's best first). */
static int midgame_root(u64 P, u64 O, int depth, int alpha, int beta, int *order, int n, int *best_move) {
    int best = -INF_SCORE, bm = order[0];
    nodes++;
    for (int i = 0; i < n; i++) {
        int sq = order[i];
        u64 f = get_flips(P, O, sq);
        u64 nP = O & ~f, nO = P | f | (1ULL << sq);
        int v;
        if (i == 0) {
            v = -midgame(nP, nO, depth - 1, -beta, -alpha, 1, 0);
        } else {
            v = -midgame(nP, nO, depth - 1, -alpha - 1, -alpha, 1, 0);
            if (v > alpha && v < beta && !aborted) v = -midgame(nP, nO, depth - 1, -beta, -alpha, 1, 0);
        }
        if (aborted) break;
        if (v > best) {
            best = v; bm = sq;
            if (v > alpha) alpha = v;
            if (alpha >= beta) break;
        }
    }
    *best_move = bm;
    return best;
}

/* ---- principal variation from the tables ------------------------------------------------ */

static int extract_pv(u64 P, u64 O, int *pv, int max_len, int exact) {
    int n = 0;
    while (n < max_len) {
        u64 moves = get_moves(P, O);
        if (!moves) {
            if (!get_moves(O, P)) break;
            u64 t = P; P = O; O = t;
            continue;
        }
        u64 key = hash_position(P, O);
        TTEntry *e = tt_probe(exact ? end_tt : mid_tt, exact ? END_BITS : MID_BITS, key);
        int sq;
        if (e && e->move < 64 && ((moves >> e->move) & 1)) {
            sq = e->move;
        } else if (exact && popcount(~(P | O)) <= 14) {
            /* the solver keeps no table near the end: find the best move again */
            int best = -INF_SCORE, empties = popcount(~(P | O));
            sq = lsb(moves);
            for (u64 b = moves; b; b &= b - 1) {
                int s = lsb(b);
                u64 f = get_flips(P, O, s);
                int v = -solve(O & ~f, P | f | (1ULL << s), -64, 64, empties - 1, 0);
                if (v > best) { best = v; sq = s; }
            }
        } else {
            break;
        }
        pv[n++] = sq;
        u64 f = get_flips(P, O, sq);
        u64 nP = O & ~f, nO = P | f | (1ULL << sq);
        P = nP; O = nO;
    }
    return n;
}

/* ---- Python interface -------------------------------------------------------------------- */

static int parse_board(PyObject *args, u64 *P, u64 *O) {
    unsigned long long p, o;
    if (!PyArg_ParseTuple(args, "KK", &p, &o)) return 0;
    if (p & o) { PyErr_SetString(PyExc_ValueError, "the two players' discs overlap"); return 0; }
    *P = p; *O = o;
    return 1;
}

static PyObject *py_moves(PyObject *self, PyObject *args) {
    u64 P, O;
    if (!parse_board(args, &P, &O)) return NULL;
    return PyLong_FromUnsignedLongLong(get_moves(P, O));
}

static PyObject *py_flips(PyObject *self, PyObject *args) {
    unsigned long long p, o;
    int sq;
    if (!PyArg_ParseTuple(args, "KKi", &p, &o, &sq)) return NULL;
    if (sq < 0 || sq > 63) { PyErr_SetString(PyExc_ValueError, "square out of range"); return NULL; }
    return PyLong_FromUnsignedLongLong(get_flips(p, o, sq));
}

static u64 perft_rec(u64 P, u64 O, int depth, int passed) {
    if (depth == 0) return 1;
    u64 moves = get_moves(P, O);
    if (!moves) {
        if (passed) return 1;  /* game over: a leaf */
        return perft_rec(O, P, depth - 1, 1);  /* a pass counts as a move */
    }
    if (depth == 1) return popcount(moves);
    u64 total = 0;
    for (u64 b = moves; b; b &= b - 1) {
        int sq = lsb(b);
        u64 f = get_flips(P, O, sq);
        total += perft_rec(O & ~f, P | f | (1ULL << sq), depth - 1, 0);
    }
    return total;
}

static PyObject *py_perft(PyObject *self, PyObject *args) {
    unsigned long long p, o;
    int depth;
    if (!PyArg_ParseTuple(args, "KKi", &p, &o, &depth)) return NULL;
    u64 r;
    Py_BEGIN_ALLOW_THREADS
    r = perft_rec(p, o, depth, 0);
    Py_END_ALLOW_THREADS
    return PyLong_FromUnsignedLongLong(r);
}

static PyObject *py_evaluate(PyObject *self, PyObject *args) {
    u64 P, O;
    if (!parse_board(args, &P, &O)) return NULL;
    return PyLong_FromLong(evaluate(P, O));
}

static PyObject *pv_list(int *pv, int n) {
    PyObject *list = PyList_New(n);
    for (int i = 0; i < n; i++) PyList_SET_ITEM(list, i, PyLong_FromLong(pv[i]));
    return list;
}

/* solve(P, O, seconds=0) -> (score, move, nodes, seconds, pv); move is -1 when the side must
 * pass; score None when the time ran out. */
static PyObject *py_solve(PyObject *self, PyObject *args) {
    unsigned long long p, o;
    double seconds = 0;
    if (!PyArg_ParseTuple(args, "KK|d", &p, &o, &seconds)) return NULL;
    if (p & o) { PyErr_SetString(PyExc_ValueError, "the two players' discs overlap"); return NULL; }
    int score = 0, move = NO_MOVE, pv[64], npv = 0;
    double start, elapsed;
    u64 count;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&engine_lock);
    ok = ensure_tables();
    if (ok) {
        clear_tables();
        nodes = 0; aborted = 0;
        start = now();
        deadline = seconds > 0 ? start + seconds : 0;
        int empties = 64 - popcount(p | o);
        u64 moves = get_moves(p, o);
        if (!moves) {
            if (!get_moves(o, p)) score = final_score(p, o);
            else { int mv; score = -solve_deep(o, p, -64, 64, empties, 1, &mv); move = PASS_MOVE; }
        } else {
            score = solve_deep(p, o, -64, 64, empties, 0, &move);
        }
        elapsed = now() - start;
        count = nodes;
        if (!aborted && moves) { deadline = 0; npv = extract_pv(p, o, pv, 64, 1); }
    }
    pthread_mutex_unlock(&engine_lock);
    Py_END_ALLOW_THREADS
    if (!ok) return PyErr_NoMemory();
    if (aborted) return Py_BuildValue("OiKdN", Py_None, -1, (unsigned long long)count, elapsed, PyList_New(0));
    return Py_BuildValue("iiKdN", score, move >= 64 ? -1 : move, (unsigned long long)count, elapsed, pv_list(pv, npv));
}

/* search(P, O, max_depth, seconds) -> (value, move, depth, nodes, seconds, pv, exact):
 * iterative deepening with aspiration windows; seconds <= 0 means no time limit. The value is
 * in hundredths of a disc (exact values are disc differences times 100). */
static PyObject *py_search(PyObject *self, PyObject *args) {
    unsigned long long p, o;
    int max_depth;
    double seconds;
    if (!PyArg_ParseTuple(args, "KKid", &p, &o, &max_depth, &seconds)) return NULL;
    if (p & o) { PyErr_SetString(PyExc_ValueError, "the two players' discs overlap"); return NULL; }
    u64 moves = get_moves(p, o);
    if (!moves) { PyErr_SetString(PyExc_ValueError, "the side to move has no legal move"); return NULL; }
    int best_value = 0, best_move = lsb(moves), depth_done = 0, pv[64], npv = 0, exact = 0;
    double start, elapsed;
    u64 count;
    int ok;
    Py_BEGIN_ALLOW_THREADS
    pthread_mutex_lock(&engine_lock);
    ok = ensure_tables();
    if (ok) {
        memset(mid_tt, 0, ((size_t)1 << MID_BITS) * sizeof(TTEntry));
        memset(killers, 0xff, sizeof(killers));
        memset(history, 0, sizeof(history));
        nodes = 0; aborted = 0;
        start = now();
        deadline = seconds > 0 ? start + seconds : 0;
        int empties = 64 - popcount(p | o);
        int order[32], n = 0;
        for (u64 b = moves; b; b &= b - 1) order[n++] = lsb(b);
        /* initial order: fewest replies first */
        for (int i = 1; i < n; i++) {
            int x = order[i], j = i - 1;
            u64 fx = get_flips(p, o, x);
            int kx = popcount(get_moves(o & ~fx, p | fx | (1ULL << x)));
            while (j >= 0) {
                u64 fj = get_flips(p, o, order[j]);
                int kj = popcount(get_moves(o & ~fj, p | fj | (1ULL << order[j])));
                if (kj <= kx) break;
                order[j + 1] = order[j]; j--;
            }
            order[j + 1] = x;
        }
        if (max_depth > empties) max_depth = empties;
        for (int depth = 1; depth <= max_depth; depth++) {
            int mv, v;
            /* once asked to reach the end, a few midgame plies order the moves, then solve */
            if (max_depth >= empties && depth > 8 && empties <= (seconds > 0 ? EXACT_TIMED : EXACT_UNTIMED))
                depth = empties;
            if (depth >= empties) {
                /* exact: solve with the endgame tables */
                memset(end_tt, 0, ((size_t)1 << END_BITS) * sizeof(TTEntry));
                v = solve_deep(p, o, -64, 64, empties, 0, &mv) * DISC;
                if (aborted) break;
                exact = 1;
            } else if (depth >= 4) {
                int window = 60;
                int a = best_value - window, b = best_value + window;
                v = midgame_root(p, o, depth, a, b, order, n, &mv);
                if (!aborted && (v <= a || v >= b)) v = midgame_root(p, o, depth, -INF_SCORE, INF_SCORE, order, n, &mv);
            } else {
                v = midgame_root(p, o, depth, -INF_SCORE, INF_SCORE, order, n, &mv);
            }
            if (aborted) break;
            best_value = v; best_move = mv; depth_done = depth;
            for (int i = 0; i < n; i++)
                if (order[i] == mv) { memmove(order + 1, order, i * sizeof(int)); order[0] = mv; break; }
            if (exact) break;
            if (deadline > 0 && now() - start > 0.45 * seconds) break; /* the next depth would not finish */
        }
        elapsed = now() - start;
        count = nodes;
        /* the PV: the best move, then the table moves */
        deadline = 0; aborted = 0;
        pv[0] = best_move;
        u64 f = get_flips(p, o, best_move);
        npv = 1 + extract_pv(o & ~f, p | f | (1ULL << best_move), pv + 1, depth_done > 0 ? depth_done - 1 : 0, exact);
    }
    pthread_mutex_unlock(&engine_lock);
    Py_END_ALLOW_THREADS
    if (!ok) return PyErr_NoMemory();
    return Py_BuildValue("iiiKdNO", best_value, best_move, depth_done, (unsigned long long)count, elapsed,
                         pv_list(pv, npv), exact ? Py_True : Py_False);
}

static PyMethodDef methods[] = {
    {"moves", py_moves, METH_VARARGS, "moves(P, O) -> bitmask of the legal moves of P"},
    {"flips", py_flips, METH_VARARGS, "flips(P, O, square) -> bitmask of the discs a move flips"},
    {"perft", py_perft, METH_VARARGS, "perft(P, O, depth) -> number of move sequences (passes count)"},
    {"evaluate", py_evaluate, METH_VARARGS, "evaluate(P, O) -> static value for P, hundredths of a disc"},
    {"solve", py_solve, METH_VARARGS, "solve(P, O, seconds=0) -> (score, move, nodes, seconds, pv)"},
    {"search", py_search, METH_VARARGS,
     "search(P, O, max_depth, seconds) -> (value, move, depth, nodes, seconds, pv, exact)"},
    {NULL, NULL, 0, NULL},
};

static struct PyModuleDef module = {PyModuleDef_HEAD_INIT, "_engine", "Bitboard Othello engine.", -1, methods};

PyMODINIT_FUNC PyInit__engine(void) { return PyModule_Create(&module); }
