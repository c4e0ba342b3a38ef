#!/bin/bash
# Usage: render.sh NAME
site=$(cat ../data/site.txt)
sed -e "s/{{name}}/$1/" -e "s/{{site}}/$site/" templates/greeting.tmpl
