class Square:
    def __init__(self, side: float):
        self.side = side

    def area(self) -> float:
        return self.side**2
