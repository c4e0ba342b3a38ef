from geometry import describe
from shapes.circle import Circle
from shapes.square import Square

for shape in (Circle(1.5), Square(2)):
    print(describe(shape))
