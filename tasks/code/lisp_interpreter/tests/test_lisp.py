import time

from lisp import LispError, evaluate


def _error(source):
    try:
        evaluate(source)
    except LispError:
        return True
    return False


def test_atoms_and_arithmetic():
    assert evaluate("42") == 42
    assert evaluate("-7") == -7 and evaluate("+7") == 7
    assert evaluate("#t") is True and evaluate("#f") is False
    assert evaluate("(+ 1 2 3)") == 6 and evaluate("(+)") == 0 and evaluate("(*)") == 1
    assert evaluate("(- 10 3 2)") == 5 and evaluate("(- 4)") == -4
    assert evaluate("(* 2 (+ 3 4))") == 14
    assert evaluate("(quotient -7 2)") == -3 and evaluate("(modulo -7 2)") == 1
    assert evaluate("") is None and evaluate("; only a comment") is None


def test_comparisons_and_logic():
    assert evaluate("(< 1 2)") is True and evaluate("(>= 1 2)") is False
    assert evaluate("(= 3 3)") is True
    assert evaluate("(and 1 2 3)") == 3 and evaluate("(and 1 #f 3)") is False and evaluate("(and)") is True
    assert evaluate("(or #f 0)") == 0 and evaluate("(or #f #f)") is False and evaluate("(or)") is False
    assert evaluate("(not 0)") is False and evaluate("(not #f)") is True
    assert evaluate("(if '() 1 2)") == 1
    assert evaluate("(if #f 1)") is None


def test_define_lambda_and_closures():
    src = """
    (define (make-adder n) (lambda (x) (+ x n)))
    (define add5 (make-adder 5))
    (add5 10)
    """
    assert evaluate(src) == 15
    assert evaluate("((lambda (a b) (- a b)) 10 4)") == 6
    assert evaluate("(define x 1) (define (f) x) (define x 2) (f)") == 2


def test_recursion():
    src = """
    ; classic recursion
    (define (fact n) (if (= n 0) 1 (* n (fact (- n 1)))))
    (define (fib n) (if (< n 2) n (+ (fib (- n 1)) (fib (- n 2)))))
    (list (fact 20) (fib 15))
    """
    assert evaluate(src) == [2432902008176640000, 610]
    assert evaluate("(define (count n) (if (= n 0) 0 (+ 1 (count (- n 1))))) (count 100)") == 100


def test_lists_and_quote():
    assert evaluate("(list 1 (+ 1 1) 3)") == [1, 2, 3]
    assert evaluate("(cons 0 (list 1 2))") == [0, 1, 2]
    assert evaluate("(car '(a b c))") == "a"
    assert evaluate("(cdr '(1 (2 3)))") == [[2, 3]]
    assert evaluate("'(x #t 3)") == ["x", True, 3]
    assert evaluate("(quote (1 . 2))") == [1, ".", 2]
    assert evaluate("(null? '())") is True and evaluate("(null? '(1))") is False
    assert evaluate("(length '(1 2 3))") == 3
    assert evaluate("(equal? '(1 (2)) (list 1 (list 2)))") is True
    assert evaluate("(equal? 1 #t)") is False
    assert evaluate("()") == []


def test_let_begin_set():
    assert evaluate("(let ((x 2) (y 3)) (* x y))") == 6
    assert evaluate("(define x 10) (let ((x 1) (y x)) y)") == 10
    assert evaluate("(begin 1 2 3)") == 3
    src = """
    (define (make-counter)
      (let ((n 0))
        (lambda () (set! n (+ n 1)) n)))
    (define c (make-counter))
    (c) (c)
    (define d (make-counter))
    (d)
    (list (c) (d))
    """
    assert evaluate(src) == [3, 2]
    assert _error("(set! undefined-name 1)")


def test_tail_calls_do_not_grow_the_stack():
    src = """
    (define (loop n acc)
      (if (= n 0)
          acc
          (begin (loop (- n 1) (+ acc 2)))))
    (loop 10000 0)
    """
    start = time.perf_counter()
    assert evaluate(src) == 20000
    src = """
    (define (even? n) (if (= n 0) #t (odd? (- n 1))))
    (define (odd? n) (if (= n 0) #f (even? (- n 1))))
    (define (walk n) (let ((m (- n 1))) (and #t (or #f (if (< m 0) 'done (walk m))))))
    (list (even? 5001) (walk 5000))
    """
    assert evaluate(src) == [False, "done"]
    assert time.perf_counter() - start < 5


def test_errors():
    bad = [
        "(+ 1", ")", "(1 2)", "(car '())", "(cdr 5)", "(cons 1 2)", "undefined", "(+ 1 #t)",
        "((lambda (x) x))", "((lambda (x) x) 1 2)", "(quotient 1 0)", "(modulo 1 0)", "(< 1)",
        "(lambda (x x) x)", "(lambda (1) 1)", "(define)", "(if)", "'", "(let ((x)) x)", "(- )",
        "(not 1 2)",
    ]
    for source in bad:
        assert _error(source), source
