from knoc.cli import main

main()
